"""Token stream for the P4 grammar: line mapping, annotations and the type-name lexer hack.

The P4-16 grammar (like C's) needs the lexer to know which identifiers name types: ``a < b``
is a comparison but ``T<bit<8>>`` a type. As p4c's lexer consults its symbol table (and
pycparser's its parser's typedef scopes), ``mark_types`` asks the parser's scope stack
(``typenames.TypeNames``) about each identifier as it hands it over, labelling type names
``TYPE_IDENTIFIER``. It also marks the ``<`` of type arguments followed by ``(`` (generic
calls and constructor calls) and joins adjacent ``>`` ``>`` into a shift operator unless they
close type arguments. Annotations are collapsed into one ``ANNOTATION`` token whose body is
parsed separately.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterator
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
# words that start a type argument; and type keywords whose "<" always opens type arguments
_TYPE_STARTS = {"bit", "int", "varbit", "bool", "error", "string", "void", "tuple", "match_kind",
                "list", "_", "."}
_SIZED = {"bit", "int", "varbit", "tuple", "value_set"}


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


def mark_types(tokens: list[Token], type_names: Container[str]) -> Iterator[Token]:
    """The lexer hack, one token at a time: label identifiers ``type_names`` holds (the
    parser's scope stack, asked as each token is handed over) ``TYPE_IDENTIFIER``, label the
    ``<`` of type arguments followed by ``(`` ``TYPE_ARGS_OPEN`` and join ``>`` ``>`` into a
    shift operator unless they close type arguments."""
    toks = list(tokens)
    n = len(toks)
    type_close: set[int] = set()  # indices of ">" that close type arguments

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
            if start and d == 0 and not (v in type_names or v in _TYPE_STARTS):
                return False
            start = False
            if v in ("<", "(", "["):
                d += 1
            elif v in (">", ")", "]"):
                d -= 1
            elif v == "," and d == 0:
                start = True
        return True

    i = 0
    while i < n:
        tok = toks[i]
        if tok.type == "IDENTIFIER" and tok.value in type_names:
            tok = toks[i] = _retype(tok, "TYPE_IDENTIFIER")
        v = tok.value if tok.type != "STRING_LITERAL" else ""
        prev = toks[i - 1] if i > 0 else None
        if v == "<" and prev is not None and (prev.type in NAME_TYPES or prev.value in _SIZED):
            close = match_angle(i)
            if close >= 0 and prev.type != "TYPE_IDENTIFIER" and prev.value not in _SIZED and \
                    not items_are_types(i, close):
                close = -1  # f(a < b, c > (d)): comparisons, as p4c parses them
            if close >= 0:
                if prev.type == "TYPE_IDENTIFIER" or prev.value in _SIZED or value(close + 1) == "(":
                    type_close.add(close)
                if value(close + 1) == "(":
                    tok = _retype(tok, "TYPE_ARGS_OPEN")
        elif (v == ">" and i + 1 < n and toks[i + 1].value == ">"
              and toks[i + 1].start_pos == tok.end_pos
              and i not in type_close and i + 1 not in type_close):
            yield Token("SHR", ">>", tok.start_pos, tok.line, tok.column,
                        toks[i + 1].end_line, toks[i + 1].end_column, toks[i + 1].end_pos)
            i += 2
            continue
        yield tok
        i += 1
