"""Token stream for the P4 grammar: line mapping, annotations and the type-name lexer hack.

The P4-16 grammar (like C's) needs the lexer to know which identifiers name types: ``a < b``
is a comparison but ``T<bit<8>>`` a type. p4c feeds its symbol table back into the lexer;
here a pre-pass over the whole token list finds every type declaration (struct, header,
header_union, enum, typedef, type, extern object, parser, control, package and scoped type
parameters) and re-labels those identifiers ``TYPE_IDENTIFIER``. The same pass marks the
``<`` of type arguments followed by ``(`` (generic calls and constructor calls) and joins
adjacent ``>`` ``>`` into a shift operator unless they close type arguments. Annotations
are collapsed into one ``ANNOTATION`` token whose body is parsed separately.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lark import Token

from p4switch.frontend.errors import CompileError, SourceLines

_CPP_DIRECTIVES = {"include", "define", "undef", "if", "ifdef", "ifndef", "elif", "else",
                   "endif", "error"}
_MARKER = re.compile(r'^#\s*(?:line\s+)?(\d+)\s+"((?:[^"\\]|\\.)*)"')

NAME_TYPES = {"IDENTIFIER", "TYPE_IDENTIFIER", "APPLY", "KEY", "ACTIONS", "STATE", "ENTRIES",
              "TYPE", "PRIORITY", "LIST"}
_TYPE_ARG_WORDS = {"bit", "int", "varbit", "bool", "error", "string", "void", "tuple",
                   "match_kind", ",", "_", "[", "]", ".",
                   "(", ")", "+", "-", "*"}  # widths given as expressions: bit<(W + 1)>
_DECL_KEYWORDS = {"struct", "header", "header_union", "parser", "control", "package"}
# tokens after which a name starts an expression (so "name<" cannot declare type parameters)
_EXPRESSION_BEFORE = {"(", ",", "=", "==", "!=", "<=", ">=", "&&", "||", "!", "?", ":", "+",
                      "-", "*", "/", "%", "&", "|", "^", "~", "[", "<<", "++", "return", "|+|",
                      "|-|", "&&&"}
# tokens that can end a type right before a declared name
_TYPE_ENDS = {">", "]", "bool", "error", "string", "int", "bit", "void", "match_kind"}


@dataclass
class LineMap:
    """Maps lines of preprocessed text to (original file, original line)."""

    clean_text: str
    origins: list[tuple[str, int]]  # index = preprocessed line number - 1
    sources: SourceLines

    def origin(self, line: int) -> tuple[str, int]:
        if 1 <= line <= len(self.origins):
            return self.origins[line - 1]
        return self.origins[-1] if self.origins else ("<unknown>", line)


def map_lines(text: str, filename: str) -> LineMap:
    """Strip cpp line markers (``# 12 "file.p4" 1``) keeping the line count, and record
    where each remaining line came from."""
    origins: list[tuple[str, int]] = []
    out: list[str] = []
    sources = SourceLines()
    cur_file, cur_line = filename, 1
    in_comment = False
    for raw in text.split("\n"):
        stripped = raw.lstrip()
        was_in_comment = in_comment
        in_comment = _ends_in_comment(raw, in_comment)
        if stripped.startswith("#") and not was_in_comment:
            m = _MARKER.match(stripped)
            origins.append((cur_file, cur_line))
            out.append("")
            if m:
                cur_line = int(m.group(1))
                cur_file = m.group(2).encode().decode("unicode_escape")
                continue
            directive = stripped[1:].split(None, 1)[0] if stripped[1:].strip() else ""
            if directive in _CPP_DIRECTIVES:
                raise CompileError(f"'#{directive}' in text that was not preprocessed (compile "
                                   f"the file with compile_file, which runs cpp)",
                                   cur_file, cur_line, raw.index("#") + 1, raw)
            cur_line += 1  # #pragma and other directives cpp passes through
            continue
        origins.append((cur_file, cur_line))
        sources.add(cur_file, cur_line, raw)
        out.append(raw)
        cur_line += 1
    return LineMap("\n".join(out), origins, sources)


def _ends_in_comment(line: str, in_comment: bool) -> bool:
    """Whether a /* block comment */ is still open at the end of ``line`` (cpp -C keeps
    comments, and a comment line may start with '#')."""
    i, n = 0, len(line)
    in_string = False
    while i < n:
        if in_comment:
            end = line.find("*/", i)
            if end < 0:
                return True
            in_comment, i = False, end + 2
            continue
        c = line[i]
        if in_string:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif line.startswith("//", i):
            return False
        elif line.startswith("/*", i):
            in_comment, i = True, i + 2
            continue
        i += 1
    return in_comment


@dataclass
class AnnotationBody:
    name: str
    tokens: list[Token]  # body tokens between the parentheses (empty when no body)
    raw: str
    has_body: bool


@dataclass
class TokenStream:
    tokens: list[Token]
    annotations: dict[int, AnnotationBody] = field(default_factory=dict)  # by start_pos


def _retype(tok: Token, new_type: str) -> Token:
    return Token.new_borrow_pos(new_type, tok.value, tok)


def collapse_annotations(tokens: list[Token], text: str) -> TokenStream:
    """Replace ``@ name ( ... )`` by one ANNOTATION token (body kept aside)."""
    out: list[Token] = []
    annotations: dict[int, AnnotationBody] = {}
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        if tok.type != "AT" or i + 1 >= n:
            out.append(tok)
            i += 1
            continue
        name_tok = tokens[i + 1]
        j = i + 2
        body: list[Token] = []
        has_body = False
        end = name_tok.end_pos
        if name_tok.value == "pragma":
            # "@pragma name args..." runs to the end of the line (P4_14-era syntax)
            k = j
            while k < n and tokens[k].line == name_tok.line:
                k += 1
            if k > j:
                body = tokens[j:k]
                has_body = True
                end = tokens[k - 1].end_pos
                j = k
        elif j < n and tokens[j].value in ("(", "["):
            opener, closer = tokens[j].value, ")" if tokens[j].value == "(" else "]"
            depth, k = 0, j
            while k < n:
                v = tokens[k].value
                if tokens[k].type not in ("STRING_LITERAL",):
                    if v == opener:
                        depth += 1
                    elif v == closer:
                        depth -= 1
                        if depth == 0:
                            break
                k += 1
            if k < n:
                body = tokens[j + 1:k]
                has_body = True
                end = tokens[k].end_pos
                j = k + 1
        ann = Token("ANNOTATION", "@" + name_tok.value, tok.start_pos, tok.line, tok.column,
                    name_tok.end_line, name_tok.end_column, end)
        annotations[tok.start_pos] = AnnotationBody(
            name_tok.value, body, text[tok.start_pos:end], has_body)
        out.append(ann)
        i = j
    return TokenStream(out, annotations)


@dataclass
class _Scope:
    names: set[str]
    depth: int  # brace depth where it was opened
    is_type: bool  # type parameters (True) or values that shadow a type name (False)
    block: bool  # ends with the enclosing block (locals) rather than the declaration


class _Scopes:
    """Type names in scope: global ones, type parameters of enclosing declarations, and
    parameters/locals that reuse a type's name (``bit<32> counter;``) and shadow it, as in
    p4c, whose lexer consults the scoped symbol table."""

    def __init__(self) -> None:
        self.globals: set[str] = set()
        self.stack: list[_Scope] = []

    def __contains__(self, name: str) -> bool:
        for scope in reversed(self.stack):
            if name in scope.names:
                return scope.is_type
        return name in self.globals

    def end_declaration(self, depth: int) -> None:
        """A ';' at ``depth`` or a '}' back to ``depth``: declaration scopes opened at that
        depth end."""
        while self.stack and self.stack[-1].depth >= depth and not (
                self.stack[-1].block and self.stack[-1].depth == depth):
            self.stack.pop()

    def end_block(self, depth: int) -> None:
        """A '}' back to ``depth``: everything opened deeper ends."""
        while self.stack and self.stack[-1].depth > depth:
            self.stack.pop()


def mark_types(stream: TokenStream) -> list[Token]:
    """The lexer hack: re-label type identifiers, type-argument angles and ``>>``."""
    toks = stream.tokens
    n = len(toks)
    scopes = _Scopes()
    depth = 0  # brace depth
    paren = 0
    type_close: set[int] = set()  # indices of ">" that close type arguments
    type_names_at: set[int] = set()  # indices of names that typedef/type declarations declare

    def is_name(k: int) -> bool:
        return 0 <= k < n and toks[k].type in NAME_TYPES

    def value(k: int) -> str:
        return toks[k].value if 0 <= k < n and toks[k].type not in ("STRING_LITERAL",) else ""

    def match_angle(k: int) -> int:
        """Index of the ">" closing the "<" at k, if the tokens between look like type
        arguments; -1 otherwise."""
        d = 0
        m = k
        while m < n:
            t = toks[m]
            v = t.value
            if v == "<" and t.type != "STRING_LITERAL":
                d += 1
            elif v == ">" and t.type != "STRING_LITERAL":
                d -= 1
                if d == 0:
                    return m
            elif not (t.type in NAME_TYPES or t.type == "INTEGER" or v in _TYPE_ARG_WORDS):
                return -1
            m += 1
        return -1

    def items_are_types(k: int, close: int) -> bool:
        """Does every top-level item between the "<" at k and ``close`` start like a type
        (a known type name, a base type keyword, "_" or a "." prefix)? Value names there
        mean the angle brackets are comparisons."""
        d = 0
        start = True
        for m in range(k + 1, close):
            t = toks[m]
            v = t.value if t.type != "STRING_LITERAL" else ""
            if start and d == 0 and not (t.type == "TYPE_IDENTIFIER" or v in scopes or v in (
                    "bit", "int", "varbit", "bool", "error", "string", "void", "tuple",
                    "match_kind", "list", "_", ".")):
                return False
            start = False
            if v in ("<", "(", "["):
                d += 1
            elif v in (">", ")", "]"):
                d -= 1
            elif v == "," and d == 0:
                start = True
        return True

    def scan_type_params(k: int) -> list[str] | None:
        """At "<" k: ``< IDENT (, IDENT)* >`` followed by "(" "{" or ";"?"""
        names = []
        m = k + 1
        while m < n and is_name(m):
            names.append(toks[m].value)
            if value(m + 1) == ",":
                m += 2
                continue
            if value(m + 1) == ">" and value(m + 2) in ("(", "{", ";"):
                return names
            return None
        return None

    def declares_value(k: int) -> bool:
        """Is the name at k being declared as a parameter, variable, field or instance
        (``T name;`` ``T name =`` ``T name,`` ``T name)`` ``ctor(...) name;``)?"""
        prev = toks[k - 1] if k > 0 else None
        nxt = value(k + 1)
        if prev is None or nxt not in (";", "=", ",", ")"):
            return False
        if prev.value == ")" and prev.type != "STRING_LITERAL":
            return nxt == ";"
        return prev.type == "TYPE_IDENTIFIER" or prev.value in _TYPE_ENDS and \
            prev.type != "STRING_LITERAL"

    i = 0
    while i < n:
        tok = toks[i]
        v = tok.value if tok.type != "STRING_LITERAL" else ""
        if tok.type == "IDENTIFIER" and tok.value in scopes:
            if i not in type_names_at and declares_value(i):
                if paren > 0:  # a parameter: hides the type until the declaration ends
                    scopes.stack.append(_Scope({tok.value}, depth, False, False))
                else:  # a local: until the end of its block
                    scopes.stack.append(_Scope({tok.value}, depth, False, True))
            else:
                toks[i] = _retype(tok, "TYPE_IDENTIFIER")
        if v == "{":
            depth += 1
        elif v == "}":
            depth -= 1
            scopes.end_block(depth)
            scopes.end_declaration(depth)
        elif v == "(":
            paren += 1
        elif v == ")":
            paren -= 1
        elif v == ";" and paren == 0:
            scopes.end_declaration(depth)
        # declarations of type names
        if v in _DECL_KEYWORDS and tok.type != "IDENTIFIER" and is_name(i + 1):
            name = toks[i + 1].value
            scopes.globals.add(name)
        elif v == "extern" and is_name(i + 1):
            after = i + 2
            if value(after) == "<":
                close = match_angle(after)
                after = close + 1 if close >= 0 else after
            if value(after) in ("{", ";"):
                scopes.globals.add(toks[i + 1].value)
        elif v == "enum":
            m = i + 1
            while m < n and value(m) != "{":
                m += 1
            if is_name(m - 1):
                scopes.globals.add(toks[m - 1].value)
        elif v == "typedef" or (tok.type == "TYPE" and depth == 0 and paren == 0
                                and value(i - 1) in ("", ";", "}", ")")
                                or tok.type == "TYPE" and i > 0 and toks[i - 1].type == "ANNOTATION"):
            m = i + 1
            braces = 0  # `typedef struct S { ... } T;`: the name follows the closing brace
            while m < n and (value(m) != ";" or braces):
                braces += {"{": 1, "}": -1}.get(value(m), 0)
                m += 1
            if is_name(m - 1):
                scopes.globals.add(toks[m - 1].value)
                type_names_at.add(m - 1)
        elif v == "<" and tok.type != "STRING_LITERAL":
            # "name<A, B>(" declares type parameters, unless it stands in an expression
            params = scan_type_params(i) if is_name(i - 1) and \
                value(i - 2) not in _EXPRESSION_BEFORE else None
            if params is not None and any(p not in scopes for p in params):
                scopes.stack.append(_Scope(set(params), depth, True, False))
                for k in range(i + 1, i + 2 * len(params), 2):
                    toks[k] = _retype(toks[k], "TYPE_IDENTIFIER")
            prev = toks[i - 1] if i > 0 else None
            if prev is not None and (prev.type in NAME_TYPES or prev.value in
                                     ("bit", "int", "varbit", "tuple", "value_set")):
                close = match_angle(i)
                if close >= 0 and prev.type != "TYPE_IDENTIFIER" and params is None and \
                        prev.value not in ("bit", "int", "varbit", "tuple", "value_set") and \
                        not items_are_types(i, close):
                    close = -1  # f(a < b, c > (d)): comparisons, as p4c parses them
                if close >= 0:
                    if prev.type == "TYPE_IDENTIFIER" or prev.value in (
                            "bit", "int", "varbit", "tuple", "value_set") or \
                            value(close + 1) == "(" or params is not None:
                        type_close.add(close)
                    if value(close + 1) == "(":
                        toks[i] = _retype(toks[i], "TYPE_ARGS_OPEN")
        i += 1

    # join ">" ">" into a shift operator where they do not close type arguments
    out: list[Token] = []
    i = 0
    while i < n:
        tok = toks[i]
        if (tok.value == ">" and tok.type != "STRING_LITERAL" and i + 1 < n
                and toks[i + 1].value == ">" and toks[i + 1].start_pos == tok.end_pos
                and i not in type_close and i + 1 not in type_close):
            out.append(Token("SHR", ">>", tok.start_pos, tok.line, tok.column,
                             toks[i + 1].end_line, toks[i + 1].end_column, toks[i + 1].end_pos))
            i += 2
            continue
        out.append(tok)
        i += 1
    return out
