"""What p4c refuses and our front end now refuses too (issue 9; found by running p4c's
p4_16_errors corpus with ``python -m p4switch.stf.corpus --frontend``): each case a small
program, refused with the message at file:line:col."""

from __future__ import annotations

import pytest

from p4switch.frontend import CompileError, compile_source

CONTROL = "control C();\npackage P(C c);\n"

CASES = [
    # parameters (p4c's checkParameters)
    pytest.param("extern X { }\ncontrol c(in X x) { apply { } }",
                 "t.p4:2:16: error: 'x': a parameter of type X cannot have a direction",
                 id="extern-with-direction"),
    pytest.param("extern void f<T>(in T data);\ncontrol c() { apply { f(\"hi\"); } }",
                 "t.p4:2:25: error: 'data': a parameter of type string cannot have a direction",
                 id="string-by-inference-with-direction"),
    pytest.param("parser Q();\nparser R(Q q);",
                 "t.p4:2:12: error: 'q': a parameter cannot have type parser Q",
                 id="parser-typed-apply-parameter"),
    pytest.param("control A() { apply { } }\ncontrol B()(A a) { apply { } }",
                 "t.p4:2:15: error: 'a': a parameter cannot have type control A",
                 id="control-declaration-as-parameter-type"),
    pytest.param("extern E { E(); }\ncontrol c() { action a(E e) { } apply { } }",
                 "t.p4:2:26: error: 'e': action parameters cannot have extern types",
                 id="extern-action-parameter"),
    pytest.param("bit<1> h(in bit<1> a) { return a; }\n"
                 "bit<1> f(in bit<1> a = h(1), in bit<1> b) { return b; }",
                 "t.p4:2:24: error: 'a': a default value must be a compile-time constant",
                 id="default-not-constant"),
    # arguments
    pytest.param("void f<T>(in T t) { }\ncontrol C() { apply { } }\n"
                 "control D() { C() c; apply { f(c); } }",
                 "t.p4:3:32: error: an argument cannot have type C", id="control-as-argument"),
    pytest.param("extern void f<T>(in T x);\ncontrol c() { apply { f(5); } }",
                 "t.p4:2:25: error: could not infer a width for type argument T of 'f'; give "
                 "the constant a width", id="int-for-type-variable"),
    pytest.param("control p()(bit<1> y) { apply { } }\n"
                 "control q(in bit<1> z) { p(z) p1; apply { p1.apply(); } }",
                 "t.p4:2:28: error: a constructor argument must be a compile-time constant or "
                 "an instance", id="constructor-argument-not-constant"),
    # comparisons
    pytest.param("control c() { table t { actions = { } } apply { "
                 "if (t.apply() == t.apply()) { } } }",
                 "t.p4:1:53: error: '==': values of type apply_result cannot be compared",
                 id="compare-apply-results"),
    pytest.param("extern e { e(); }\ncontrol c() { e() a; e() b; apply { bool x = a == b; } }",
                 "t.p4:2:46: error: '==': values of type e cannot be compared",
                 id="compare-externs"),
    pytest.param("bool g<t>(in t a, in t b) { return a == b; }",
                 "t.p4:1:36: error: '==': values of type t cannot be compared",
                 id="compare-type-variables"),
    # instantiation
    pytest.param(CONTROL + "control D() { apply { } }\nD() d;",
                 "t.p4:4:5: error: 'd': a control cannot be instantiated at top level",
                 id="control-instance-at-top-level"),
    pytest.param(CONTROL + "extern X { X(); }\nvoid f() { X() x; }",
                 "t.p4:4:16: error: 'x': instantiations cannot be in a function",
                 id="instance-in-function"),
    pytest.param("extern g { g(); abstract void h(); }\npackage p(g a);\np(g()) main;",
                 "t.p4:3:3: error: extern g has abstract methods: instantiate it with a "
                 "declaration that implements them", id="abstract-extern-by-constructor"),
    # expressions that must be constant
    pytest.param("header h_t { bit<8> v; }\ncontrol c(inout h_t h, inout bit<4> b) { apply { "
                 "h.v = (bit<8>)(5 >> b); } }",
                 "t.p4:2:65: error: the width of a shifted constant must be known when the shift "
                 "amount is not constant; cast it", id="shift-int-by-variable"),
    pytest.param("parser p() { bit<8> x; state start { transition select(8w0) { "
                 "x &&& x: accept; default: reject; } } }",
                 "t.p4:1:63: error: a keyset must be a compile-time constant",
                 id="keyset-not-constant"),
]


@pytest.mark.parametrize("text, message", CASES)
def test_refused_as_p4c_refuses(text, message):
    with pytest.raises(CompileError) as e:
        compile_source(text, "t.p4", target=None)
    assert str(e.value).splitlines()[0] == message


@pytest.mark.parametrize("text", [
    "extern bit<8> f();\nextern E { E(bit<8> x); }\ncontrol c() { E(f()) e; apply { } }",
    "control p()(bit<2> y) { apply { } }\ncontrol q()(bit<2> b) { p(b) p1; apply { p1.apply(); } }",
    "extern void f<T>(in T x);\ncontrol c() { apply { f(8w5); } }",
    "struct s { bit<8> f; }\ncontrol c(in s a, in s b, out bool r) { apply { r = a == b; } }",
])
def test_what_p4c_accepts_stays_accepted(text):
    compile_source(text, "t.p4", target=None)
