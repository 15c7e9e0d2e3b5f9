"""The front end's semantic passes (see ``passes.py`` and ../README.md), one module per concern.

- ``resolve``: the ``resolve-references`` pass and its ``ReferenceMap``, on the scopes of
  ``scopes`` (declare, lookup, near-miss suggestions);
- ``checker``: the ``type-inference`` pass, ``TypeInference``, which combines
  ``typerefs`` (type references to types: widths, stacks, generic struct specializations),
  ``declarations`` (each declaration in order), ``instances`` (extern/package instantiation),
  ``tables`` (typing tables; the ``table-checks`` pass is ``tables.check_tables``),
  ``statements`` (statements and parser transitions), ``expressions``, ``calls``,
  ``coercion`` (expressions and calls, implicit conversions); ``typemap``: its ``TypeMap``;
- ``constfold``: the ``constant-folding`` pass, ``ConstantFolding``, whose rules type inference
  applies on demand, and its ``ConstantMap``.

Each concern of type inference is a class whose methods use the others through ``self``;
``TypeInference`` combines them with the state they share (the reference map, the
error/match_kind types, the body being checked).
"""
