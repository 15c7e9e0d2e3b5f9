"""The pipeline API used by the switch: ingress -> EgressJob -> egress with queue metadata,
digests, meters and selectors driven through the control-plane objects, clone truncation,
and robustness against malformed frames."""

import random
from pathlib import Path

import pytest

from p4rt.entries import (
    ActionCall,
    CloneSession,
    CounterData,
    Exact,
    GroupRef,
    MemberRef,
    MeterConfig,
    Replica,
    ResourceExhaustedError,
    TableEntry,
)
from p4switch.exec import LoadedProgram, QueueMeta, V1Pipeline
from p4switch.exec.externs import random_in
from p4switch.exec.hashes import crc16

PROGS = Path(__file__).parent / "programs"


def load(name: str) -> LoadedProgram:
    return LoadedProgram.from_file(PROGS / name)


def q_frame(prio: int) -> bytes:
    return bytes([prio]) + bytes(4 + 3 + 4 + 3 + 6 + 6 + 2 + 4)


def test_ingress_egress_with_queue_metadata_and_digest():
    prog = load("qmeta.p4")
    pipe = V1Pipeline(prog)
    res = pipe.ingress(7, q_frame(5), now_us=1000)
    assert len(res.to_egress) == 1
    job = res.to_egress[0]
    assert (job.egress_port, job.priority, job.instance_type, job.packet_length) == (3, 5, 0, 33)
    assert res.digests[0].name == "learn_t"
    assert res.digests[0].fields == [("prio", 8, 5), ("port", 9, 7)]
    out = pipe.egress(job, QueueMeta(enq_timestamp=1000, enq_qdepth=12, deq_timedelta=250, deq_qdepth=11),
                      now_us=1250)
    assert len(out.transmit) == 1
    port, frame = out.transmit[0]
    assert port == 3
    f = frame
    assert f[0] == 5
    assert int.from_bytes(f[1:5], "big") == 1000
    assert int.from_bytes(f[5:8], "big") == 12
    assert int.from_bytes(f[8:12], "big") == 250
    assert int.from_bytes(f[12:15], "big") == 11
    assert int.from_bytes(f[15:21], "big") == 1000
    assert int.from_bytes(f[21:27], "big") == 1250
    assert int.from_bytes(f[27:29], "big") == 3
    assert int.from_bytes(f[29:33], "big") == 33


def ctl(op: int, idx: int = 0, v: int = 0) -> bytes:
    return bytes([op, idx]) + v.to_bytes(4, "big") + b"\x00\x00"


def test_meter_colours_follow_configured_rates():
    prog = load("stateful.p4")
    pipe = V1Pipeline(prog)
    m = prog.meters["I.mtr"]
    m.set_config(1, MeterConfig(cir=1000, cburst=2, pir=2000, pburst=3))
    colours = [pipe.process(0, ctl(4, 1), now_us=10)[0][1][6] for _ in range(4)]
    assert colours == [0, 0, 1, 2]  # green, green, yellow, red
    later = pipe.process(0, ctl(4, 1), now_us=10 + 2000)[0][1][6]  # 2 ms refills 2 tokens
    assert later == 0
    assert pipe.process(0, ctl(4, 2), now_us=0)[0][1][6] == 0  # unconfigured: green


def test_direct_counter_and_direct_meter_through_entries():
    prog = load("stateful.p4")
    pipe = V1Pipeline(prog)
    fwd = prog.tables["I.fwd"]
    assert fwd.direct_counter == "I.dctr"
    fwd.insert(TableEntry({"hdr.ctl.op": Exact(5)}, ActionCall("I.set_port", {"port": 4})))
    pol = prog.tables["I.pol"]
    pol.insert(TableEntry({"hdr.ctl.idx": Exact(9)}, ActionCall("I.mark"),
                          meter=MeterConfig(cir=1, cburst=8, pir=1, pburst=16)))
    colours = []
    for _ in range(3):
        (port, frame), = pipe.process(0, ctl(5, 9), now_us=0)
        assert port == 4
        colours.append(frame[6])
    assert colours == [0, 1, 2]  # 8-byte packets: 8 of 8 committed, 8 of 16 peak, none left
    assert pipe.process(0, ctl(6), now_us=0)[0][0] == 1  # a miss: the default, not counted
    assert fwd.get({"hdr.ctl.op": Exact(5)}).counter == CounterData(3, 24)
    pol.set_meter({"hdr.ctl.idx": Exact(9)}, 0, None)
    assert pipe.process(0, ctl(5, 9), now_us=0)[0][1][6] == 0


def test_action_selector_spreads_by_crc16_of_selector_fields():
    prog = load("stateful.p4")
    pipe = V1Pipeline(prog)
    prof = prog.action_profiles["I.sel"]
    assert prof.has_selector and prog.tables["I.ecmp"].implementation == "I.sel"
    for mid, port in ((1, 11), (2, 12), (3, 13)):
        prof.add_member(mid, ActionCall("I.pick", {"p": port}))
    prof.add_group(10, [(1, 1), (2, 1), (3, 1)])
    t = prog.tables["I.ecmp"]
    t.insert(TableEntry({"hdr.ctl.idx": Exact(1)}, GroupRef(10)))
    t.insert(TableEntry({"hdr.ctl.idx": Exact(2)}, MemberRef(3)))
    seen = set()
    for v in range(0, 4000, 97):
        got = pipe.process(0, ctl(6, 1, v))[0][1][7]
        assert got == 11 + crc16(v.to_bytes(4, "big")) % 3
        seen.add(got)
    assert seen == {11, 12, 13}
    assert pipe.process(0, ctl(6, 2, 5))[0][1][7] == 13


def test_i2e_clone_session_truncation_and_class_of_service():
    prog = load("replication.p4")
    pipe = V1Pipeline(prog)
    prog.pre.set_clone_session(CloneSession(5, [Replica(3, 0)], cos=6, truncate=10))
    frame = bytes.fromhex("000000000001000000000002" "1234" "01000000" "0000" "AB")
    res = pipe.ingress(0, frame, 0)
    clones = [j for j in res.to_egress if j.instance_type == 1]
    assert [(j.egress_port, j.priority) for j in clones] == [(3, 6)]
    out = pipe.egress(clones[0], QueueMeta(), 0)
    assert out.transmit == [(3, frame[:10])]


def test_recirculation_through_the_api_carries_preserved_metadata():
    prog = load("replication.p4")
    pipe = V1Pipeline(prog)
    frame = bytes.fromhex("000000000001000000000002" "1234" "04000000" "0000" "AB")
    job, = pipe.ingress(9, frame, 0).to_egress
    out = pipe.egress(job, QueueMeta(), 0)
    assert out.transmit == []
    (port, again), = out.recirculate
    assert port == 9
    job2, = pipe.ingress(port, again, 0).to_egress
    assert job2.instance_type == 4
    (p, f), = pipe.egress(job2, QueueMeta(), 0).transmit
    assert f.hex() == "000000000001000000000002" "1234" "0404000077" "09" "ab"


def test_multicast_to_unknown_group_and_pipeline_counters():
    prog = load("replication.p4")
    pipe = V1Pipeline(prog)
    frame = bytes.fromhex("000000000001000000000002" "1234" "02000000" "0000" "AB")
    assert pipe.process(0, frame) == []
    assert pipe.stats["dropped_unknown_mc_group"] == 1
    pipe.process(0, bytes.fromhex("000000000001000000000002" "1234" "06000000" "0000"))
    assert pipe.stats["dropped_ingress"] == 1


def test_malformed_frames_never_raise_and_are_counted():
    prog = load("basic_l3.p4")
    pipe = V1Pipeline(prog)
    rng = random.Random(5)
    frames = [b"", b"\x00", bytes(13), bytes.fromhex("0000000000010000000000020800") + b"\x45"]
    frames += [bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 80))) for _ in range(300)]
    frames.append(bytes(9000))
    for f in frames:
        assert pipe.process(rng.randint(0, 511), f) == []  # no route installed: all dropped
    s = pipe.stats
    assert s["packets_in"] == len(frames)
    assert s["parser_error_PacketTooShort"] >= 4
    assert s["dropped_ingress"] == len(frames)
    assert s["dropped_after_parser_error"] >= 4
    assert s["dropped_internal_error"] == 0


def test_program_fault_drops_the_packet_and_counts_it():
    prog = load("basic_l3.p4")
    pipe = V1Pipeline(prog)
    pipe._begin = lambda *a: 1 // 0  # a bug inside the generated code
    assert pipe.process(0, bytes(40)) == []
    assert pipe.stats["dropped_internal_error"] == 1


LOOPER = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> v; }
struct headers { h_t h; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        log_msg("v={}", { hdr.h.v });
        assert(hdr.h.v != 0xFF);
        sm.egress_spec = 1;
        if (hdr.h.v == 1) { resubmit_preserving_field_list(0); }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { if (hdr.h.v == 2) { recirculate_preserving_field_list(0); } }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def test_endless_resubmit_recirculate_and_failed_assert_are_bounded_drops(tmp_path):
    src = tmp_path / "looper.p4"
    src.write_text(LOOPER)
    pipe = V1Pipeline(LoadedProgram.from_file(src), max_passes=5)
    assert pipe.process(0, b"\x01") == []
    assert pipe.stats["resubmitted"] == 4 and pipe.stats["dropped_pass_limit"] == 1
    assert pipe.process(0, b"\x02") == []
    assert pipe.stats["recirculated"] == 5 and pipe.stats["dropped_pass_limit"] == 2
    assert pipe.process(0, b"\xff") == []
    assert pipe.stats["dropped_assert"] == 1
    assert pipe.process(0, b"\x03") == [(1, b"\x03")]
    assert pipe.logs[-1] == "v=3"


def test_random_stays_in_its_run_time_range():
    pipe = V1Pipeline(load("random_range.p4"), seed=7)
    values = []
    for _ in range(300):
        (_, f), = pipe.process(0, (1000).to_bytes(2, "big") + (1009).to_bytes(2, "big") + bytes(2))
        values.append(int.from_bytes(f[4:6], "big"))
    assert set(values) == set(range(1000, 1010))
    (_, f), = pipe.process(0, (5).to_bytes(2, "big") + (5).to_bytes(2, "big") + bytes(2))
    assert f[4:6] == b"\x00\x05"


def test_random_draws_what_randint_draws_from_the_same_seed():
    """A seed gives the values it gave when the extern called ``Random.randint``: seeded runs
    (the simulator's run files) stay reproducible across versions."""
    ranges = [(0, 1), (1000, 1009), (0, 65535), (0, (1 << 48) - 1), (7, 100)] * 50
    ours, theirs = random.Random(11), random.Random(11)
    assert [random_in(ours.getrandbits, lo, hi) for lo, hi in ranges] == [theirs.randint(lo, hi) for lo, hi in ranges]


def test_parser_value_set_members_from_the_control_plane():
    prog = load("value_set.p4")
    pipe = V1Pipeline(prog)
    vs = prog.value_sets["P.special"]
    frame = bytes.fromhex("88B5" "10")
    assert pipe.process(0, frame) == [(1, frame)]  # empty set: not parsed, not changed
    vs.set_members([(0x88B0, 0xFFF0)])
    assert pipe.process(0, frame) == [(1, bytes.fromhex("88B5" "11"))]
    with pytest.raises(ResourceExhaustedError):
        vs.set_members([(i, 0xFFFF) for i in range(5)])


def test_hash_leaves_out_an_invalid_headers_fields_on_every_packet_of_a_flow():
    """The hash of one field list, packet after packet: a valid header's field hashed with the
    rest, an invalid one's left out (BMv2), the same answer each time a flow comes back
    (the generated code remembers hashes per field values)."""
    pipe = V1Pipeline(load("hash_optional.p4"))
    for _ in range(3):
        for x in (0, 0x1234):
            out = pipe.process(0, bytes([1]) + x.to_bytes(2, "big") + bytes([7, 0, 0]))
            assert out[0][1][-2:] == crc16(b"\x07" + x.to_bytes(2, "big")).to_bytes(2, "big")
        out = pipe.process(0, bytes([0, 7, 0, 0]))
        assert out[0][1][-2:] == crc16(b"\x07").to_bytes(2, "big")
