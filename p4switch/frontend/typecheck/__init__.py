"""The ``typecheck`` pass: ``checker.Checker``, one module per concern.

- ``scopes``: name resolution (scopes, declare, lookup, near-miss suggestions);
- ``typerefs``: type references to types (widths, stacks, generic struct specializations);
- ``declarations``: each declaration in order, entering its scope;
- ``instances``, ``tables``: extern/package instantiation and table checks;
- ``statements``: statements and parser transitions;
- ``expressions``, ``calls``, ``coercion``: type inference of expressions and calls,
  implicit conversions;
- ``constfold``: the folding rules the expressions apply as they are typed.

Each concern is a class whose methods use the others through ``self``; ``Checker`` combines
them with the state they share (the scopes, the error/match_kind types, the body being
checked).
"""
