"""Fixtures shared by several test folders."""

import pytest
from p4.config.v1 import p4types_pb2

from p4switch.p4info.model import (
    ActionInfo,
    ActionProfileInfo,
    ActionRefInfo,
    Annotations,
    ControllerHeaderInfo,
    CounterlikeInfo,
    DigestInfo,
    MatchFieldInfo,
    MetadataInfo,
    ParamInfo,
    ProgramInfo,
    RegisterInfo,
    TableInfo,
)


def bits(width: int) -> p4types_pb2.P4DataTypeSpec:
    spec = p4types_pb2.P4DataTypeSpec()
    spec.bitstring.bit.bitwidth = width
    return spec


@pytest.fixture
def model() -> ProgramInfo:
    """A hand-written control-plane model (tables of every match kind, externs, digests)."""
    info = ProgramInfo()
    info.actions = [
        ActionInfo("NoAction"),
        ActionInfo("MyIngress.set_port", [ParamInfo("port", 9)]),
        ActionInfo("MyIngress.rewrite", [ParamInfo("mac", 48, Annotations(at_id=5)), ParamInfo("port", 9)]),
    ]
    info.tables = [
        TableInfo("MyIngress.acl",
                  [MatchFieldInfo("hdr.ipv4.dstAddr", 32, "ternary"),
                   MatchFieldInfo("hdr.tcp.dport", 16, "range"),
                   MatchFieldInfo("meta.vrf", 8, "optional")],
                  [ActionRefInfo("MyIngress.set_port"),
                   ActionRefInfo("NoAction", Annotations(texts=["@defaultonly"]))],
                  const_default_action="NoAction", initial_default=("NoAction", []),
                  size=256, direct_counter="MyIngress.acl_hits"),
        TableInfo("MyIngress.fwd",
                  [MatchFieldInfo("hdr.ipv4.dstAddr", 32, "lpm"),
                   MatchFieldInfo("meta.port", 9, "exact", Annotations(at_id=7))],
                  [ActionRefInfo("MyIngress.set_port", Annotations(texts=["@tableonly"])),
                   ActionRefInfo("MyIngress.rewrite")],
                  initial_default=("MyIngress.rewrite", [(0x0A0B0C0D0E0F, 48), (3, 9)])),
        TableInfo("MyIngress.ecmp", [MatchFieldInfo("meta.group", 8, "exact")],
                  [ActionRefInfo("MyIngress.set_port")], implementation="MyIngress.sel"),
    ]
    info.action_profiles = [ActionProfileInfo("MyIngress.sel", True, 128, ["MyIngress.ecmp"])]
    info.direct_counters = [CounterlikeInfo("MyIngress.acl_hits", "packets_and_bytes", direct_table="MyIngress.acl")]
    info.counters = [CounterlikeInfo("MyIngress.port_bytes", "bytes", 512)]
    info.meters = [CounterlikeInfo("MyIngress.policer", "packets", 16)]
    info.registers = [RegisterInfo("MyIngress.flowlet", 1024, bits(48))]
    learn = p4types_pb2.P4DataTypeSpec()
    learn.struct.name = "learn_t"
    info.digests = [DigestInfo("learn_t", learn)]
    entry = info.type_info.structs["learn_t"]
    m = entry.members.add(name="mac")
    m.type_spec.CopyFrom(bits(48))
    info.controller_headers = [
        ControllerHeaderInfo("packet_in", "packet_in_header_t", [MetadataInfo("ingress_port", 9), MetadataInfo("_pad", 7)]),
        ControllerHeaderInfo("packet_out", "packet_out_header_t", [MetadataInfo("egress_port", 9), MetadataInfo("_pad", 7)]),
    ]
    return info
