"""The front end refuses what p4c's BMv2 back end refuses (p4switch/frontend/bmv2_limits.py),
with p4c's wording, and still accepts what p4c accepts. Each refused snippet is one p4c 1.2.4
rejects with the quoted message (backends/bmv2/common/lower.cpp, header.cpp, action.cpp,
simple_switch/simpleSwitch.cpp); the accepted ones it compiles."""

from __future__ import annotations

import grpc
import pytest
from p4.v1 import p4runtime_pb2

from p4rt.errors import P4RuntimeError
from p4switch.compile_cli import main as compile_main
from p4switch.frontend import CompileError, compile_file
from p4switch.frontend.bmv2_limits import Bmv2LimitError
from p4switch.frontend.preprocess import preprocess
from p4switch.p4info import generate_p4info
from p4switch.p4info.device_config import encode
from p4switch.p4runtime.pipeline import compile_config
from p4switch.switch.device import check_device_config

SHIFT_8 = "shift amount limited to 8 bits on this target"


def _refused(path, target="bmv2") -> Bmv2LimitError:
    with pytest.raises(Bmv2LimitError) as info:
        compile_file(str(path), target=target)
    return info.value


@pytest.mark.parametrize("decls, body, expr", [
    # fabric.p4's DRE_SHIFT before the fix: a bit<48> constant as the amount
    ("const bit<48> SHIFT = 6;", "hdr.eth.dst = hdr.eth.dst >> SHIFT;", "hdr.eth.dst >> SHIFT"),
    ("", "hdr.eth.dst = hdr.eth.dst << meta.b16;", "hdr.eth.dst << meta.b16"),
    ("", "meta.b32 = meta.b32 >> 16w3;", "meta.b32 >> 16w3"),
    ("", "meta.b32 = meta.b32 >> (bit<9>)meta.b8;", "meta.b32 >> (bit<9>)meta.b8"),
])
def test_shift_amounts_wider_than_8_bits_are_refused(v1prog, find_line, decls, body, expr):
    path = v1prog(decls=decls, body="        " + body)
    err = _refused(path)
    line = find_line(path, body)
    assert str(err).startswith(f"{path}:{line}:")
    assert f"error: [--Werror=overlimit] {expr}: {SHIFT_8}" in str(err)


def test_an_untyped_shift_amount_is_limited_to_256(v1prog):
    err = _refused(v1prog(body="        meta.b32 = meta.b32 << 300;"))
    assert "[--Werror=overlimit] meta.b32 << 300: shift amount limited to 256 on this target" in str(err)


def test_every_violation_is_reported(v1prog):
    err = _refused(v1prog(body="        meta.b32 = meta.b32 << meta.b16;\n"
                               "        meta.b16 = meta.b16 >> meta.b32;"))
    assert len(err.errors) == 2 and str(err).count("error:") == 2


@pytest.mark.parametrize("decls, body", [
    ("const bit<8> SHIFT = 6;", "hdr.eth.dst = hdr.eth.dst >> SHIFT;"),  # fabric.p4 now
    ("", "hdr.eth.dst = hdr.eth.dst << meta.b8;"),
    ("", "meta.b32 = meta.b32 >> (bit<8>)meta.b16;"),
    ("", "meta.b32 = meta.b32 << 256;"),
    ("", "meta.b32 = (bit<32>)(48w1 << 16w40);"),  # folded by p4c before its back end
    ("", "meta.b32 = meta.b32 << 16w0;"),  # likewise: x << 0 is x
    ("", "meta.b16 = 16w0 >> meta.b32;"),  # and 0 >> x is 0
    ("action unused(inout bit<48> v, bit<32> x) { v = v << x; }", ""),  # p4c drops unused code
])
def test_what_p4c_accepts_still_compiles(v1prog, decls, body):
    compile_file(str(v1prog(decls=decls, body="        " + body)))


def test_table_actions_and_functions_are_checked_where_the_pipeline_reaches_them(v1prog):
    path = v1prog(decls="bit<48> shifted(in bit<48> v, in bit<16> n) { return v << n; }",
                  locals="    action a(bit<16> n) { hdr.eth.src = hdr.eth.src >> n; }\n"
                         "    table t { key = { hdr.eth.dst: exact; } actions = { a; } }",
                  body="        t.apply();\n        hdr.eth.dst = shifted(hdr.eth.dst, meta.b16);")
    err = _refused(path)
    assert [e.message.split(":")[0] for e in err.errors] == [
        "[--Werror=overlimit] v << n", "[--Werror=overlimit] hdr.eth.src >> n"]


def test_headers_must_be_whole_bytes(v1prog):
    err = _refused(v1prog(decls="header odd_t { bit<7> a; bit<2> b; }\nstruct m2 { odd_t o; }",
                          locals="    m2 local;", body="        local.o.setValid();"))
    assert ("error: [--Werror=target-error] odd_t: Found header with fields totaling 9 bits.  BMv2 "
            "target only supports headers with fields totaling a multiple of 8 bits.") in str(err)


def test_registers_hold_bits_only(v1prog):
    err = _refused(v1prog(decls="struct pair_t { bit<8> a; bit<8> b; }",
                          locals="    register<pair_t>(4) r;",
                          body="        pair_t p = { 1, 2 };\n        r.write(0, p);"))
    assert "[--Werror=target-error] r: Only registers with bit or int types are currently supported" in str(err)


def test_table_action_parameters_are_bits(v1prog):
    err = _refused(v1prog(locals="    action flag(bool on) { if (on) { meta.b8 = 1; } }\n"
                                 "    table t { key = { hdr.eth.dst: exact; } actions = { flag; } }",
                          body="        t.apply();"))
    assert "[--Werror=invalid] on: action parameters must be bit<> or int<> on this target" in str(err)


@pytest.mark.parametrize("body, message", [
    ("clone(CloneType.E2E, 5);", "'clone(E2E, ...) not invoked in egress clone(CloneType.E2E, 5)"),
    ("clone_preserving_field_list(CloneType.E2E, 5, 1);",
     "'clone_preserving_field_list(E2E, ...) not invoked in egress"),
    ("recirculate_preserving_field_list(0);", "'recirculate' can only be invoked in egress"),
])
def test_clone_recirculate_in_the_wrong_pipeline(v1prog, body, message):
    err = _refused(v1prog(body="        " + body))
    assert f"error: [--Werror=target-error] {message}" in str(err)


EGRESS_RESUBMIT = """#include <core.p4>
#include <v1model.p4>
struct h_t { }
struct m_t { }
parser P(packet_in pk, out h_t h, inout m_t m, inout standard_metadata_t sm) { state start { transition accept; } }
control V(inout h_t h, inout m_t m) { apply { } }
action again() { resubmit_preserving_field_list(0); }
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { again(); } }
control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply { again(); clone(CloneType.I2E, 3); }
}
control C(inout h_t h, inout m_t m) { apply { } }
control D(packet_out pk, in h_t h) { apply { } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_an_action_shared_by_ingress_and_egress_is_checked_in_each(tmp_path):
    path = tmp_path / "shared.p4"
    path.write_text(EGRESS_RESUBMIT)
    err = _refused(path)
    assert [e.line for e in err.errors] == [7, 10]  # once for the action, at its call site in egress
    assert "'resubmit' can only be invoked in ingress" in err.errors[0].message
    assert "'clone(I2E, ...) not invoked in ingress" in err.errors[1].message


def test_front_end_only_and_other_architectures_are_not_bmv2_programs(v1prog, tmp_path):
    path = v1prog(body="        meta.b32 = meta.b32 << meta.b16;")
    compile_file(str(path), target=None)  # as p4test: the language allows it
    other = tmp_path / "other.p4"
    other.write_text("control c(inout bit<32> x, in bit<16> n) { apply { x = x << n; } }\n"
                     "control ctr(inout bit<32> x, in bit<16> n);\npackage top(ctr c);\ntop(c()) main;\n")
    compile_file(str(other))
    with pytest.raises(ValueError):
        compile_file(str(path), target="tofino")


def test_compiler_cli_refuses_with_p4c_wording(v1prog, tmp_path, capsys):
    path = v1prog(decls="const bit<48> SHIFT = 6;", body="        hdr.eth.dst = hdr.eth.dst >> SHIFT;")
    assert compile_main([str(path), "--target", "bmv2", "-o", str(tmp_path / "out.json")]) == 1
    err = capsys.readouterr().err
    assert f"error: [--Werror=overlimit] hdr.eth.dst >> SHIFT: {SHIFT_8}" in err and "Traceback" not in err
    assert not (tmp_path / "out.json").exists()
    assert compile_main([str(path), "--target", "ebpf"]) == 1
    assert "target 'ebpf' is not supported" in capsys.readouterr().err


def test_a_bmv2_limit_error_is_a_compile_error(v1prog):
    with pytest.raises(CompileError):
        compile_file(str(v1prog(body="        meta.b32 = meta.b32 << meta.b16;")))


def test_the_switch_refuses_such_a_pipeline_with_invalid_argument(v1prog):
    """SetForwardingPipelineConfig compiles the device config the same way."""
    good = v1prog(body="        meta.b32 = meta.b32 << meta.b8;")
    config = p4runtime_pb2.ForwardingPipelineConfig()
    config.p4info.CopyFrom(generate_p4info(compile_file(str(good))))
    bad = v1prog(body="        meta.b32 = meta.b32 << meta.b16;")
    config.p4_device_config = encode("prog.p4", preprocess(str(bad)))
    with pytest.raises(P4RuntimeError) as info:
        compile_config(config, check_device_config)
    assert info.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert SHIFT_8 in str(info.value)


TABLES = ("    action a() { }\n"
          "    table t { key = { hdr.eth.dst: exact; } actions = { a; } }\n"
          "    table u { key = { hdr.eth.src: exact; } actions = { a; } }")


@pytest.mark.parametrize("body", [
    "t.apply();\n        t.apply();",
    "if (t.apply().hit) { u.apply(); }\n        if (meta.b8 == 1) { t.apply(); }",
    "switch (u.apply().action_run) { a: { t.apply(); } }\n        t.apply();",
])
def test_a_table_applied_twice_on_one_path_is_refused(v1prog, body):
    err = _refused(v1prog(locals=TABLES, body="        " + body))
    assert ("[--Werror=invalid] Program can not be implemented on this target since it contains a "
            "path from table t back to itself") in str(err)


@pytest.mark.parametrize("body", [
    "if (meta.b8 == 1) { t.apply(); } else { t.apply(); }",  # exclusive branches
    "if (meta.b8 == 1) { t.apply(); exit; }\n        t.apply();",  # the first path ends
    "switch (u.apply().action_run) { a: { t.apply(); } default: { } }",
])
def test_a_table_applied_on_separate_paths_compiles(v1prog, body):
    compile_file(str(v1prog(locals=TABLES, body="        " + body)))


def test_a_control_instance_with_tables_applied_twice_is_refused(v1prog):
    path = v1prog(decls="control Sub(inout headers_t hdr) {\n"
                        "    action a() { }\n"
                        "    table s { key = { hdr.eth.dst: exact; } actions = { a; } }\n"
                        "    apply { s.apply(); }\n}",
                  locals="    Sub() one;\n    Sub() two;",
                  body="        one.apply(hdr);\n        two.apply(hdr);\n        one.apply(hdr);")
    err = _refused(path)
    assert "path from table s back to itself" in str(err)


@pytest.mark.parametrize("body", [
    "if (meta.b8 == 1) { t.apply(); u.apply(); } else { t.apply(); }",
    "if (meta.b8 == 1) { t.apply(); meta.b16 = 1; } else { t.apply(); meta.b16 = 1; }",
    "if (t.apply().hit) { meta.b8 = 1; } else if (meta.b16 == 2) { if (t.apply().hit) { meta.b8 = 3; } }",
])
def test_a_table_applied_in_places_that_continue_differently_is_refused(v1prog, body):
    err = _refused(v1prog(locals=TABLES, body="        " + body))
    assert ("[--Werror=invalid] Program is not supported by this target, because table t has "
            "multiple successors") in str(err)


@pytest.mark.parametrize("body", [
    "if (meta.b8 == 1) { t.apply(); } else { meta.b16 = 2; t.apply(); }\n        u.apply();",
    "if (meta.b8 == 1) { t.apply(); u.apply(); } else { t.apply(); u.apply(); }",
])
def test_a_table_applied_in_places_that_continue_alike_compiles(v1prog, body):
    compile_file(str(v1prog(locals=TABLES, body="        " + body)))


CHECKSUM = """#include <core.p4>
#include <v1model.p4>
header ip_t { bit<8> a; bit<8> b; bit<16> csum; }
struct h_t { ip_t ip; }
struct m_t { bit<16> x; }
parser P(packet_in pk, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start { pk.extract(h.ip); transition accept; }
}
control V(inout h_t h, inout m_t m) {
    apply { VERIFY }
}
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { INGRESS } }
control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout h_t h, inout m_t m) {
    apply { update_checksum(h.ip.isValid(), { h.ip.a, h.ip.b }, h.ip.csum, HashAlgorithm.csum16); }
}
control D(packet_out pk, in h_t h) { apply { pk.emit(h.ip); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
GOOD_VERIFY = "verify_checksum(h.ip.isValid(), { h.ip.a, h.ip.b, 8w0 }, h.ip.csum, HashAlgorithm.csum16);"


def _checksum_program(tmp_path, verify=GOOD_VERIFY, ingress=""):
    path = tmp_path / "cksum.p4"
    path.write_text(CHECKSUM.replace("VERIFY", verify).replace("INGRESS", ingress))
    return path


@pytest.mark.parametrize("verify, message", [
    ("verify_checksum(true, { h.ip.a, h.ip.b[3:0] }, h.ip.csum, HashAlgorithm.csum16);",
     "[--Werror=unsupported] h.ip.b[3:0]: Computations are not supported in verify_checksum"),
    ("verify_checksum(true, { h.ip.a + 1 }, h.ip.csum, HashAlgorithm.csum16);",
     "[--Werror=unsupported] h.ip.a + 1: Computations are not supported in verify_checksum"),
    ("m.x = 1; " + GOOD_VERIFY,
     "[--Werror=unsupported] m.x = 1;: Only calls to verify_checksum or verify_checksum_with_payload allowed"),
    ("if (h.ip.isValid()) { " + GOOD_VERIFY + " }",
     "Only calls to verify_checksum or verify_checksum_with_payload allowed"),
])
def test_checksum_controls_only_hold_checksums_of_plain_fields(tmp_path, verify, message):
    assert message in str(_refused(_checksum_program(tmp_path, verify)))


def test_hash_input_must_be_a_list_or_struct(tmp_path):
    bad = "hash(m.x, HashAlgorithm.crc16, 16w0, m.x, 16w1024);"
    err = _refused(_checksum_program(tmp_path, ingress=bad))
    assert "[--Werror=Target model error] m.x: expected a struct" in str(err)
    for good in ("hash(m.x, HashAlgorithm.crc16, 16w0, { h.ip.a }, 16w1024);",
                 "hash(m.x, HashAlgorithm.crc16, 16w0, h.ip, 16w1024);",
                 "hash(m.x, HashAlgorithm.crc16, 16w0, m, 16w1024);"):
        compile_file(str(_checksum_program(tmp_path, ingress=good)))


def test_one_lpm_key_per_table(v1prog):
    err = _refused(v1prog(locals="    table t { key = { hdr.eth.dst: lpm; hdr.eth.src: lpm; } actions = { NoAction; } }",
                          body="        t.apply();"))
    assert "[--Werror=unsupported] multiple LPM keys in table t not supported" in str(err)


def test_a_field_of_next_is_not_readable(tmp_path):
    path = tmp_path / "next.p4"
    path.write_text(CHECKSUM.replace("struct h_t { ip_t ip; }", "struct h_t { ip_t ip; ip_t[2] st; }")
                    .replace("pk.extract(h.ip); transition accept;",
                             "pk.extract(h.st.next); transition select(h.st.next.a) { default: accept; }")
                    .replace("VERIFY", GOOD_VERIFY).replace("INGRESS", ""))
    err = _refused(path)
    assert "[--Werror=uninitialized] h.st.next uninitialized: next field read" in str(err)
    path.write_text(path.read_text().replace("select(h.st.next.a)", "select(h.st.last.a)"))
    compile_file(str(path))


def test_externs_bmv2_does_not_implement(v1prog):
    err = _refused(v1prog(decls="extern Gadget { Gadget(); void poke(); }\nextern void ring(in bit<8> x);",
                          locals="    Gadget() g;",
                          body="        g.poke();\n        ring(meta.b8);"))
    assert "[--Werror=unknown] Gadget: unknown extern instance" in str(err)
    assert "[--Werror=unknown] ring: unknown extern function" in str(err)


@pytest.mark.parametrize("loop", [
    "for (bit<8> i = 0; i < 4; i = i + 1) { meta.b8 = meta.b8 + i; }",
    "for (bit<8> i in 1 .. 3) { meta.b8 = meta.b8 + i; }",
])
def test_loops_are_refused(v1prog, find_line, loop):
    """p4c's simple_switch mid end refuses every loop before unrolling anything
    (backends/bmv2/common/check_unsupported.h), constant bounds included."""
    path = v1prog(body="        " + loop)
    err = _refused(path)
    assert str(err).startswith(f"{path}:{find_line(path, loop)}:")
    assert "error: [--Werror=unsupported] BMV2 does not support loops" in str(err)
    compile_file(str(path), target=None)  # the language has them: refused for BMv2 only
