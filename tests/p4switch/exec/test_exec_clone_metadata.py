"""What metadata a clone starts egress with, as simple_switch does it: an I2E clone is parsed
again, then all metadata is reset and only the preserved field list is copied in, so a field
the parser set is 0 in the clone unless it is preserved; standard_metadata keeps only
instance_type and packet_length (ingress_port and the ingress timestamp read 0). E2E clones
get the same reset. The egress control writes what it sees into a trailer header."""

from p4rt.entries import CloneSession, Replica
from p4switch.exec import LoadedProgram, V1Pipeline

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> v; }
header seen_t {
    bit<8>  from_parser;   /* set by the parser, not preserved */
    bit<8>  parsed_kept;   /* set by the parser, preserved */
    bit<8>  kept;          /* set in ingress, preserved */
    bit<16> ingress_port;
    bit<8>  instance_type;
    bit<32> packet_length;
    bit<16> ingress_ts;
}
struct headers { h_t h; seen_t seen; }
struct metadata {
    bit<8> from_parser;
    @field_list(1) bit<8> parsed_kept;
    @field_list(1) bit<8> kept;
}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        meta.from_parser = 0xAB;
        meta.parsed_kept = 0xCD;
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        meta.kept = 0x5C;
        if (hdr.h.v == 1) { clone_preserving_field_list(CloneType.I2E, 5, 1); }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.seen.setValid();
        hdr.seen.from_parser = meta.from_parser;
        hdr.seen.parsed_kept = meta.parsed_kept;
        hdr.seen.kept = meta.kept;
        hdr.seen.ingress_port = (bit<16>)sm.ingress_port;
        hdr.seen.instance_type = (bit<8>)sm.instance_type;
        hdr.seen.packet_length = sm.packet_length;
        hdr.seen.ingress_ts = (bit<16>)sm.ingress_global_timestamp;
        if (hdr.h.v == 2 && sm.instance_type == 0) {
            clone_preserving_field_list(CloneType.E2E, 6, 1);
        }
    }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.seen); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def seen(frame: bytes) -> dict[str, int]:
    f = frame[1:]
    return {"from_parser": f[0], "parsed_kept": f[1], "kept": f[2],
            "ingress_port": int.from_bytes(f[3:5], "big"), "instance_type": f[5],
            "packet_length": int.from_bytes(f[6:10], "big"), "ingress_ts": int.from_bytes(f[10:12], "big")}


def pipeline(tmp_path) -> V1Pipeline:
    src = tmp_path / "clone_meta.p4"
    src.write_text(PROGRAM)
    prog = LoadedProgram.from_file(src)
    prog.pre.set_clone_session(CloneSession(5, [Replica(3, 0)]))
    prog.pre.set_clone_session(CloneSession(6, [Replica(4, 0)]))
    return V1Pipeline(prog)


def test_i2e_clone_resets_what_the_parser_set_but_keeps_the_field_list(tmp_path):
    out = dict(pipeline(tmp_path).process(7, b"\x01" + bytes(9), now_us=1000))
    assert seen(out[1]) == {"from_parser": 0xAB, "parsed_kept": 0xCD, "kept": 0x5C, "ingress_port": 7,
                            "instance_type": 0, "packet_length": 10, "ingress_ts": 1000}
    assert seen(out[3]) == {"from_parser": 0, "parsed_kept": 0xCD, "kept": 0x5C, "ingress_port": 0,
                            "instance_type": 1, "packet_length": 10, "ingress_ts": 0}
    assert out[3][:1] == b"\x01" and out[3][13:] == bytes(9)  # the packet itself, parsed again


def test_e2e_clone_starts_from_reset_metadata_too(tmp_path):
    out = dict(pipeline(tmp_path).process(7, b"\x02" + bytes(9), now_us=1000))
    assert seen(out[1])["from_parser"] == 0xAB
    assert seen(out[4]) == {"from_parser": 0, "parsed_kept": 0xCD, "kept": 0x5C, "ingress_port": 0,
                            "instance_type": 2, "packet_length": 10, "ingress_ts": 0}
