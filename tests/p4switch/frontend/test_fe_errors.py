"""Bad programs get one clear error: file:line:col, the message, the source line and a caret.

Each case drops a faulty snippet into a valid v1model program and checks the complete
error text, so a wrong position, a vaguer message or a Python traceback all fail.
"""

from __future__ import annotations

import pytest

from p4switch.frontend import CompileError, compile_file, compile_source

# (snippet placement, text that marks the faulty line, column, message)
CASES = [
    pytest.param(dict(body="        meta.b8 = 1\n        meta.b16 = 2;"), "meta.b16 = 2;", 9,
                 "syntax error, unexpected identifier 'meta'", id="missing-semicolon"),
    pytest.param(dict(body="        meta.b8 = 1 $ 2;"), "1 $ 2", 21,
                 "syntax error, unexpected character '$'", id="bad-character"),
    pytest.param(dict(body="        meta.b8 = foo;"), "= foo;", 19,
                 "'foo' is not declared", id="undeclared-name"),
    pytest.param(dict(decls='const bool OK = static_assert(__v1model_version >= 20200408, '
                            '"needs the 2020 v1model");'), "static_assert", 17,
                 "needs the 2020 v1model", id="static-assert"),
    pytest.param(dict(locals="    bit<8> counter_val;", body="        counter_vla = 1;"),
                 "counter_vla", 9, "'counter_vla' is not declared; did you mean 'counter_val'?",
                 id="near-miss-suggestion"),
    pytest.param(dict(decls="struct q_t { foo_t x; }"), "struct q_t", 14,
                 "'foo_t' is not a declared type", id="undeclared-type"),
    pytest.param(dict(body="        meta.b8 = hdr.eth.etype;"), "hdr.eth.etype;", 19,
                 "assignment: cannot use a value of type bit<16> where bit<8> is expected",
                 id="width-mismatch"),
    pytest.param(dict(body="        meta.b16 = meta.b8 + meta.b16;"), "meta.b8 + meta.b16", 20,
                 "'+': operands have different types bit<8> and bit<16>; insert a cast",
                 id="operand-widths"),
    pytest.param(dict(body="        meta.b8 = true;"), "= true;", 19,
                 "assignment: cannot use a value of type bool where bit<8> is expected",
                 id="bool-to-bits"),
    pytest.param(dict(deparse="        hdr.eth.dst = 0;"), "hdr.eth.dst = 0;", 9,
                 "cannot assign to 'in' parameter 'hdr'", id="assign-in-param"),
    pytest.param(dict(decls="const bit<8> K = 3;", body="        K = 4;"), "K = 4;", 9,
                 "cannot assign to constant 'K'", id="assign-constant"),
    pytest.param(dict(body="        mark_to_drop(sm, 1);"), "mark_to_drop(sm, 1)", 9,
                 "'mark_to_drop' does not take 2 arguments", id="wrong-arg-count"),
    pytest.param(dict(locals="    action a(bit<8> x) { meta.b8 = x; }", body="        a();"),
                 "a();", 9, "'a' takes 1 argument, got 0 (missing 'x')", id="missing-action-arg"),
    pytest.param(dict(body="        meta.b8 = hdr.eth.ttl;"), "hdr.eth.ttl", 27,
                 "eth_t has no field 'ttl'", id="unknown-field"),
    pytest.param(dict(body="        meta.b8 = (bit<8>)hdr.eth.etpye;"), "etpye", 35,
                 "eth_t has no field 'etpye'; did you mean 'etype'?", id="field-suggestion"),
    pytest.param(dict(decls="const bit<8> X = 1;\nconst bit<8> X = 2;"), "X = 2", 14,
                 "'X' is already declared", id="duplicate"),
    pytest.param(dict(body="        hash(meta.b8 + 1, HashAlgorithm.crc16, 8w0, {hdr.eth.src}, 32w16);"),
                 "hash(", 14, "cannot pass to out parameter 'result' an expression that is not "
                 "a variable", id="out-arg-not-lvalue"),
    pytest.param(dict(locals="    action a() {}\n    action b() {}\n    table t { key = { "
                      "hdr.eth.dst: exact; } actions = { a; } default_action = b(); }"),
                 "default_action = b()", 79, "default action 'b' is not in the table's actions "
                 "list", id="default-action-not-listed"),
    pytest.param(dict(locals="    action a() {}\n    table t { key = { hdr.eth.dst: exact; } "
                      "actions = { @tableonly a; } default_action = a(); }"),
                 "default_action = a()", 90, "action 'a' is @tableonly and cannot be the default "
                 "action", id="tableonly-default"),
    pytest.param(dict(locals="    action a() {}\n    table t { key = { hdr.eth.dst: exact; } "
                      "actions = { @defaultonly a; } const entries = { 1: a(); } }"),
                 "const entries", 96, "action 'a' is @defaultonly and cannot be used in table "
                 "entries", id="defaultonly-entry"),
    pytest.param(dict(locals="    table t { key = { hdr.eth.dst: exact; } actions = { NoAction; } "
                      "const entries = { _: NoAction(); } }"),
                 "const entries", 87, "'_' (don't care) is not allowed for exact key field "
                 "'hdr.eth.dst'", id="dont-care-on-exact"),
    pytest.param(dict(locals="    table t { key = { hdr.eth.dst: lpm; } actions = { NoAction; } "
                      "const entries = { 1 .. 2: NoAction(); } }"),
                 "const entries", 85, "a range (..) is not allowed for lpm key field "
                 "'hdr.eth.dst'", id="range-on-lpm"),
    pytest.param(dict(locals="    table t { key = { hdr.eth.dst: fuzzy; } actions = { NoAction; } }"),
                 "fuzzy", 36, "'fuzzy' is not a match_kind", id="unknown-match-kind"),
    pytest.param(dict(body="        if (meta.b8) { }"), "if (meta.b8)", 13,
                 "if condition must be bool, not bit<8>", id="non-bool-condition"),
    pytest.param(dict(locals="    const bit<8> K = meta.b8;"), "const bit<8> K", 22,
                 "initializer of constant 'K' is not a compile-time constant", id="const-not-const"),
    pytest.param(dict(locals="    register<bit<8>>(4) r;", body="        r.peek(meta.b8, 0);"),
                 "r.peek", 11, "extern register has no method 'peek'", id="unknown-method"),
    pytest.param(dict(body="        meta.b8 = (1 << meta.b8) == 2 ? 8w1 : 8w2;"), "(1 << meta.b8)", 20,
                 "the width of a shifted constant must be known when the shift amount is not "
                 "constant; cast it", id="shift-of-int"),
    pytest.param(dict(body="        meta.b8 = meta.b16[15:4];"), "meta.b16[15:4]", 19,
                 "assignment: cannot use a value of type bit<12> where bit<8> is expected",
                 id="slice-width"),
    pytest.param(dict(body="        meta.b8 = meta.b16[16:4];"), "meta.b16[16:4]", 19,
                 "invalid slice [16:4] of bit<16>", id="slice-out-of-range"),
    pytest.param(dict(body="        meta.b8 = 8w256;"), "8w256", 19,
                 "value 8w256 does not fit in bit<8>", id="literal-too-wide"),
    pytest.param(dict(body="        meta.b8 = error.NoSuchError;"), "NoSuchError", 25,
                 "error.NoSuchError is not declared", id="unknown-error"),
    pytest.param(dict(decls="struct s2_t { eth_t[2] st; }", locals="    s2_t v;",
                      body="        v.st.next.dst = 1;"), "v.st.next", 9,
                 "'next' of a header stack is only allowed in parsers", id="next-outside-parser"),
    pytest.param(dict(deparse="        pkt.emit(8w1);"), "pkt.emit(8w1)", 18,
                 "emit needs a header, header stack, header_union or a struct of them, not a "
                 "value of type bit<8>", id="emit-non-header"),
    pytest.param(dict(decls="bit<8> f(in bit<8> x) { return f(x); }"), "return f(x)", 32,
                 "'f' is not declared", id="recursion"),
    pytest.param(dict(decls="parser Q(packet_in p, out headers_t h) { state start { "
                      "transition select(h) { default: accept; } } }"), "select(h)", 74,
                 "cannot select on a value of type headers_t", id="select-on-struct"),
]


@pytest.mark.parametrize("snippet,marker,col,message", CASES)
def test_error_text_and_position(v1prog, find_line, snippet, marker, col, message):
    path = v1prog(**snippet)
    line = find_line(path, marker)
    with pytest.raises(CompileError) as info:
        compile_file(str(path))
    source = path.read_text().splitlines()[line - 1]
    assert str(info.value) == f"{path}:{line}:{col}: error: {message}\n{source}\n{' ' * (col - 1)}^"
    assert (info.value.file, info.value.line, info.value.col) == (str(path), line, col)


def test_missing_include_reports_preprocessor_error(tmp_path):
    path = tmp_path / "inc.p4"
    path.write_text("#include <core.p4>\n#include <no_such_file.p4>\n")
    with pytest.raises(CompileError) as info:
        compile_file(str(path))
    text = str(info.value)
    assert text.startswith(f"{path}:2:10: error: preprocessor:")
    assert "no_such_file.p4" in text


def test_missing_file():
    with pytest.raises(CompileError) as info:
        compile_file("/nonexistent/prog.p4")
    assert str(info.value) == "/nonexistent/prog.p4:0:0: error: cannot read file '/nonexistent/prog.p4'"


def test_error_in_unsaved_source_shows_its_line():
    """compile_source text is not on disk: the caret line comes from the text itself."""
    text = "const bit<8> A = 1;\nconst bit<8> B = A +;\n"
    with pytest.raises(CompileError) as info:
        compile_source(text, "mem.p4")
    assert str(info.value) == ("mem.p4:2:21: error: syntax error, unexpected ';'\n"
                               "const bit<8> B = A +;\n" + " " * 20 + "^")


def test_error_location_maps_through_line_markers():
    """Preprocessed text: positions refer to the file named by the cpp markers."""
    text = '# 1 "top.p4"\nconst bit<8> A = 1;\n# 40 "lib.p4" 1\nconst bit<8> B = C;\n'
    with pytest.raises(CompileError) as info:
        compile_source(text, "ignored.p4")
    assert (info.value.file, info.value.line, info.value.col) == ("lib.p4", 40, 18)
    assert str(info.value).splitlines()[1] == "const bit<8> B = C;"


def test_unexpected_end_of_file():
    with pytest.raises(CompileError) as info:
        compile_source("struct s_t {\n    bit<8> a;\n", "eof.p4")
    assert str(info.value).startswith("eof.p4:2:14: error: syntax error, unexpected end of file")


def test_program_without_main(tmp_path):
    """p4c's front end (p4test) accepts it with a warning; running it needs a V1Switch."""
    path = tmp_path / "nomain.p4"
    path.write_text("#include <v1model.p4>\nconst bit<8> A = 1;\n")
    checked = compile_file(str(path))
    assert checked.warnings == [f"{path}: warning: the program has no package instance named 'main'"]
    with pytest.raises(CompileError) as info:
        checked.pipeline
    assert str(info.value) == f"{path}:0:0: error: the program has no package instance named 'main'"


def test_other_architectures_type_check_but_do_not_run(tmp_path):
    path = tmp_path / "other.p4"
    path.write_text("control c(inout bit<16> x) { apply { x = x + 1; } }\n"
                    "control ctr(inout bit<16> x);\npackage top(ctr ctrl);\ntop(c()) main;\n")
    checked = compile_file(str(path))
    assert checked.warnings == []
    with pytest.raises(CompileError) as info:
        checked.pipeline
    assert str(info.value).startswith(f"{path}:4:10: error: 'main' must be a V1Switch package, not top")


def test_unpreprocessed_text_is_refused_clearly():
    with pytest.raises(CompileError) as info:
        compile_source("#include <core.p4>\nconst bit<8> A = 1;\n", "raw.p4")
    assert str(info.value).startswith("raw.p4:1:1: error: '#include' in text that was not "
                                      "preprocessed")


def test_hash_lines_inside_comments_are_not_directives(tmp_path):
    """cpp -C keeps comments; a comment line starting with '#' must neither be taken for a
    directive nor shift the line numbers."""
    path = tmp_path / "comments.p4"
    path.write_text('#include <v1model.p4>\n/* example:\n#include <foo.p4>\n # 12 "x.p4"\n*/\n'
                    'const bit<8> J = /* b\n#define X */ 2;\nconst bit<8> L = Q;\n')
    with pytest.raises(CompileError) as info:
        compile_file(str(path))
    assert str(info.value) == (f"{path}:8:18: error: 'Q' is not declared\n"
                               "const bit<8> L = Q;\n" + " " * 17 + "^")


def test_syntax_error_names_the_expected_token():
    with pytest.raises(CompileError) as info:
        compile_source("struct s_t {\n    bit<8> a\n}\n", "semi.p4")
    assert str(info.value) == "semi.p4:3:1: error: syntax error, unexpected '}'; expected ';'\n}\n^"
