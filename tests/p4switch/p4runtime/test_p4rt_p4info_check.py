"""SetForwardingPipelineConfig refuses a P4Info that does not describe the device config's
program, naming the first mismatch (INVALID_ARGUMENT); one that does is accepted."""

from pathlib import Path

import grpc
import pytest
from p4.v1 import p4runtime_pb2

from p4rt.errors import P4RuntimeError
from p4switch.frontend import compile_file
from p4switch.p4info import generate_p4info
from p4switch.p4runtime.p4info_check import check_p4info

ROOT = Path(__file__).resolve().parents[3]
Set = p4runtime_pb2.SetForwardingPipelineConfigRequest


@pytest.fixture(scope="module")
def fabric_p4info():

    checked = compile_file(str(ROOT / "p4src" / "fabric.p4"),
                           include_dirs=[str(ROOT / "p4src"), str(ROOT / "p4src" / "include")])
    return generate_p4info(checked)


def _one(objects, name):
    return next(o for o in objects if o.preamble.name == name)


def _lpm_key(p):
    return _one(p.tables, "FabricIngress.routing.routing_v4").match_fields[0]


def _port_param(p):
    return _one(p.actions, "FabricIngress.routing.route_to_port").params[0]


# (what to change in fabric.p4's P4Info, words the error must contain)
CASES = {
    "48-bit LPM key": (lambda p: setattr(_lpm_key(p), "bitwidth", 48),
                       "table FabricIngress.routing.routing_v4 key hdr.ipv4.dst_addr: bitwidth 48 in P4Info, "
                       "32 in the program"),
    "renamed key": (lambda p: setattr(_lpm_key(p), "name", "hdr.ipv4.dst"),
                    "routing_v4: key hdr.ipv4.dst is not in the program (its keys: hdr.ipv4.dst_addr)"),
    "key kind": (lambda p: setattr(_lpm_key(p), "match_type", 4),
                 "key hdr.ipv4.dst_addr: match_type TERNARY in P4Info, LPM in the program"),
    "key id": (lambda p: setattr(_lpm_key(p), "id", 2), "key hdr.ipv4.dst_addr: id 0x2 in P4Info, 0x1"),
    "missing key": (lambda p: _one(p.tables, "FabricIngress.acl.acl").match_fields.pop(),
                    "table FabricIngress.acl.acl: keys [standard_metadata.ingress_port"),
    "32-bit port parameter": (lambda p: setattr(_port_param(p), "bitwidth", 32),
                              "action FabricIngress.routing.route_to_port parameter port: bitwidth 32 in P4Info, "
                              "9 in the program"),
    "renamed parameter": (lambda p: setattr(_port_param(p), "name", "egress"),
                          "route_to_port: parameter egress is not in the program"),
    "table id": (lambda p: setattr(_one(p.tables, "FabricIngress.acl.acl").preamble, "id", 0x02000001),
                 "table FabricIngress.acl.acl: id 0x2000001 in P4Info"),
    "unknown table": (lambda p: setattr(_one(p.tables, "FabricIngress.acl.acl").preamble, "name", "FabricIngress.x"),
                      "table FabricIngress.x is not in the program"),
    "foreign action ref": (lambda p: _one(p.tables, "FabricIngress.acl.acl").action_refs.add(
                               id=_one(p.actions, "FabricIngress.pfc.set_pfc_port").preamble.id),
                           "acl.acl: action FabricIngress.pfc.set_pfc_port is not one of the table's actions"),
    "counter size": (lambda p: setattr(_one(p.counters, "FabricIngress.counters.rx_port"), "size", 64),
                     "counter FabricIngress.counters.rx_port: size 64 in P4Info, 512 in the program"),
    "counter unit": (lambda p: setattr(_one(p.counters, "FabricIngress.counters.rx_port").spec, "unit", 1),
                     "counter FabricIngress.counters.rx_port: unit 1 in P4Info, 3 in the program"),
    "direct counter table": (lambda p: setattr(_one(p.direct_counters, "FabricIngress.acl.acl_counter"),
                                               "direct_table_id",
                                               _one(p.tables, "FabricIngress.routing.routing_v4").preamble.id),
                             "direct counter FabricIngress.acl.acl_counter: table"),
    "register width": (lambda p: setattr(_one(p.registers, "port_qdepth").type_spec.bitstring.bit, "bitwidth", 32),
                       "register port_qdepth: bitwidth 32 in P4Info, 19 in the program"),
    "register size": (lambda p: setattr(_one(p.registers, "port_qdepth"), "size", 8),
                      "register port_qdepth: size 8 in P4Info, 512 in the program"),
    "action profile": (lambda p: setattr(p.action_profiles[0], "with_selector", False),
                       "action profile FabricIngress.routing.ecmp_selector: with_selector False"),
    "packet metadata": (lambda p: setattr(_one(p.controller_packet_metadata, "packet_out").metadata[0], "bitwidth", 16),
                        "controller packet metadata packet_out metadata egress_port: bitwidth 16 in P4Info, 9"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_mismatch_is_named(fabric_p4info, case):
    change, message = CASES[case]
    given = type(fabric_p4info)()
    given.CopyFrom(fabric_p4info)
    change(given)
    with pytest.raises(P4RuntimeError) as info:
        check_p4info(given, fabric_p4info)
    assert info.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert message in str(info.value)


def test_the_generated_p4info_and_a_subset_pass(fabric_p4info):
    check_p4info(fabric_p4info, fabric_p4info)
    fewer = type(fabric_p4info)()
    fewer.CopyFrom(fabric_p4info)
    del fewer.tables[-1]  # a controller may leave out what it does not use; sizes are hints
    _one(fewer.tables, "FabricIngress.acl.acl").size = 7
    check_p4info(fewer, fabric_p4info)


def test_digest_fields_are_compared(switch_program):
    given = type(switch_program.p4info)()
    given.CopyFrom(switch_program.p4info)
    struct = given.type_info.structs[given.digests[0].type_spec.struct.name]
    struct.members[0].type_spec.bitstring.bit.bitwidth += 1
    with pytest.raises(P4RuntimeError, match=r"digest learn_t field \w+: type bit<\d+> in P4Info, bit<\d+> in the"):
        check_p4info(given, switch_program.p4info)


def test_server_refuses_a_mismatched_p4info(switch, switch_program, rt):
    c = rt.Client(switch.address, election_id=1)
    try:
        c.arbitrate()
        config = switch_program.config()
        key = _one(config.p4info.tables, "MyIngress.routes").match_fields[0]
        key.bitwidth = 48
        for action in (Set.VERIFY, Set.VERIFY_AND_COMMIT, Set.RECONCILE_AND_COMMIT):
            with pytest.raises(grpc.RpcError) as info:
                c.set_pipeline(config, action)
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert ("table MyIngress.routes key hdr.ipv4.dstAddr: bitwidth 48 in P4Info, 32 in the program"
                    in info.value.details())
        assert switch.device.program is None
        c.set_pipeline(switch_program.config())
        assert switch.device.program is not None
    finally:
        c.close()
