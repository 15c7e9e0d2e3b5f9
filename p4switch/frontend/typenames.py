"""The parser's scope stack of type names, which the lexer consults.

The P4-16 grammar (like C's) needs the lexer to tell type names from other identifiers:
``a < b`` is a comparison but ``T<bit<8>>`` a type. As pycparser's parser keeps a scope stack
of typedef names and its lexer asks it, the parser here owns ``TypeNames``: grammar actions
(run by lark when it reduces a rule) declare what the program declares, and the lexer asks
``name in type_names`` for each identifier it hands to the parser next.

The actions run when a ``name`` is reduced, which lark does as soon as it sees the token after
the name, so a name is in scope before the lexer classifies the token after that one. What a
``name`` declares follows from what precedes it on the parser's value stack (yacc's ``$0``):

- ``struct``/``header``/``header_union``/``enum``/``parser``/``control``/``package``/``extern``
  ``NAME``, or ``typedef``/``type``/``enum`` *type* ``NAME``: a type, at top level;
- ``NAME`` in ``< NAME, ... >`` after a declared name: a type parameter, in scope until that
  declaration ends;
- *type* ``NAME`` or ``ctor(args) NAME``: a parameter, variable, constant, field or instance,
  which hides a type of the same name (``bit<32> counter;`` under v1model's ``extern counter``)
  until its declaration (parameters) or its block (locals) ends, as in p4c.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from lark import Token, Tree
from lark.parsers.lalr_interactive_parser import InteractiveParser

_TYPE_KEYWORDS = {"struct", "header", "header_union", "enum", "parser", "control", "package",
                  "extern"}
_ALIAS_KEYWORDS = {"typedef", "type", "enum"}  # keyword, a type, then the declared name
# parse-tree nodes of a type reference, as lark leaves them on the value stack
_TYPE_REFS = {"bool_type", "match_kind_type", "error_type", "bit1_type", "string_type",
              "int_type", "bit_type", "signed_type", "varbit_type", "type_name",
              "specialized_type", "header_stack_type", "tuple_type", "list_type"}


@dataclass
class _Scope:
    names: set[str]
    depth: int  # brace depth where it was opened
    is_type: bool  # type parameters (True) or values that hide a type name (False)
    block: bool  # ends with the enclosing block (locals) rather than the declaration


class TypeNames:
    """Type names in scope: top-level types, type parameters of enclosing declarations, and
    parameters/locals that reuse a type's name and hide it."""

    def __init__(self) -> None:
        self.globals: set[str] = set()
        self.stack: list[_Scope] = []
        self.depth = 0  # braces
        self.paren = 0  # parentheses: a ';' inside "for (...)" ends no declaration
        self._value_stack: list = []

    def __contains__(self, name: str) -> bool:
        for scope in reversed(self.stack):
            if name in scope.names:
                return scope.is_type
        return name in self.globals

    # -- the parser's side -----------------------------------------------------------------
    def attach(self, ip: InteractiveParser) -> None:
        """Run this object's grammar actions in ``ip`` (a fresh interactive parse)."""
        state = ip.parser_state
        conf = copy.copy(state.parse_conf)
        conf.callbacks = dict(conf.callbacks)
        for rule, callback in conf.callbacks.items():
            if isinstance(rule, str):
                continue
            if rule.origin.name == "name":
                conf.callbacks[rule] = self._action(callback, self._declared_name)
            elif rule.origin.name == "non_type_name":  # "extern E {": E is no ``name``
                conf.callbacks[rule] = self._action(callback, self._declared_extern)
            elif rule.origin.name == "type_parameter_list":
                conf.callbacks[rule] = self._action(callback, self._type_parameter)
        state.parse_conf = conf
        self._value_stack = state.value_stack

    def _action(self, callback, action):
        def run(children: list):
            action(children)
            return callback(children)
        return run

    def _declared_name(self, children: list) -> None:
        stack = self._value_stack
        before = stack[-1] if stack else None
        if _keyword(before) in _TYPE_KEYWORDS:
            self.globals.add(_text(children))
        elif isinstance(before, Tree) and len(stack) >= 2 and _keyword(stack[-2]) in _ALIAS_KEYWORDS:
            self.globals.add(_text(children))
        elif isinstance(before, Tree) and before.data in _TYPE_REFS or _keyword(before) == ")":
            name = _text(children)
            if name in self:
                # a parameter hides the type until its declaration ends, a local until its block
                self.stack.append(_Scope({name}, self.depth, False, self.paren == 0))

    def _declared_extern(self, children: list) -> None:
        stack = self._value_stack
        if stack and _keyword(stack[-1]) == "extern":
            self.globals.add(_text(children))

    def _type_parameter(self, children: list) -> None:
        name = _text(children[-1:])
        if len(children) == 1:
            self.stack.append(_Scope({name}, self.depth, True, False))
        else:
            self.stack[-1].names.add(name)

    def shifted(self, tok: Token) -> None:
        """The parser consumed ``tok``: braces and ';' end scopes."""
        v = _keyword(tok)
        if v == "{":
            self.depth += 1
        elif v == "}":
            self.depth -= 1
            self._end_block()
            self._end_declaration()
        elif v == "(":
            self.paren += 1
        elif v == ")":
            self.paren -= 1
        elif v == ";" and self.paren == 0:
            self._end_declaration()

    def _end_declaration(self) -> None:
        """Declaration scopes opened at the current depth end (a ';' or a '}' back to it)."""
        while self.stack and self.stack[-1].depth >= self.depth and not (
                self.stack[-1].block and self.stack[-1].depth == self.depth):
            self.stack.pop()

    def _end_block(self) -> None:
        """Everything opened deeper than the current depth ends."""
        while self.stack and self.stack[-1].depth > self.depth:
            self.stack.pop()


def _keyword(x) -> str | None:
    """The text of a keyword or punctuation token on the value stack."""
    if isinstance(x, Token) and x.type not in ("IDENTIFIER", "TYPE_IDENTIFIER", "STRING_LITERAL"):
        return x.value
    return None


def _text(children: list) -> str:
    """The identifier a ``name``/``non_type_name`` reduction (or its tree) holds."""
    x = children[0]
    while isinstance(x, Tree):
        x = x.children[0]
    return str(x)
