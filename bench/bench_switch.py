"""Packets/s of the switch on basic L3 forwarding (lab/programs/basic.p4).

Two figures: the ``p4switch`` process switching between two veths (raw sockets in and out,
traffic manager, pipeline; wall time, so it depends on the machine's load) for basic.p4 and
for fabric.p4, driven closed-loop by a sender that keeps at most ``WINDOW``
frames in flight so no frame is lost in kernel buffers; and the Device in process (ingress,
traffic manager, egress, no sockets), to show what the I/O costs.

Where the reference switch is installed (``simple_switch_grpc`` and ``p4c`` to compile for
it), each veth figure is measured for BMv2 too, with the same sender and receiver, in
alternating rounds (ours, BMv2, ours, BMv2, ...; medians), and two ratios are printed: of
packets/s (ours / BMv2) and of the switch process's CPU per frame (BMv2 / ours). On this
shared 2-core machine packets/s of one run moves by 2x with the host's load and with where the
scheduler puts the sender; the CPU per frame moves far less, so it is the steadier comparison.
The BMv2 is the first ``simple_switch_grpc`` on PATH (its path is printed): for its
performance build installed beside the default one, e.g. in /opt/bmv2-perf,
``PATH=/opt/bmv2-perf/bin:$PATH LD_LIBRARY_PATH=/opt/bmv2-perf/lib python -m bench switch``.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.result import Result
from lab.basic_program import BASIC_P4, CPU_PORT, FORWARD, TABLE, udp_frame
from lab.forwarding_rate import Rate, Route, forwarding_rate
from lab.targets import TargetUnavailable, compile_program, tool
from netbase.clock import DilatedClock
from p4rt.entries import ActionCall, Lpm, TableEntry
from p4switch.exec import LoadedProgram, native
from p4switch.frontend import compile_file
from p4switch.switch.device import Device

FABRIC_P4 = Path(__file__).resolve().parent.parent / "p4src" / "fabric.p4"
FRAMES = 20000
WINDOW = 64
IN_PROCESS_FRAMES = 20000
IN_PROCESS_READ = 32  # frames per read of a port (the I/O loop reads up to 64)
ROUNDS = 3  # per target when BMv2 runs beside ours


def _veth_rate(target: str, program: Path, routes: list[Route], frame: bytes) -> Rate:
    """Closed-loop rate of ``program`` on ``target`` switching ``frame`` from port 1 to port 2
    (raises TargetUnavailable when the target's tools are not installed). ``ours:BACKEND``
    runs our switch with that backend of the generated code (``p4switch --backend``)."""
    target, _, backend = target.partition(":")
    with tempfile.TemporaryDirectory() as work:
        compiled = compile_program(target, program, work, include_dirs=[str(program.parent)])
        rate = forwarding_rate(target, compiled, routes, frame, seconds=60, max_frames=FRAMES, window=WINDOW,
                               prefix="bs", cpu_port=CPU_PORT, backend=backend or None, batched=True)
    if rate.received < rate.sent:
        print(f"[bench_switch] {target} {program.name}: {rate.received}/{rate.sent} frames delivered")
    return rate


def _side_by_side(name: str, program: Path, routes: list[Route], frame: bytes) -> list[Result]:
    """Ours on each backend alone, or with BMv2 in alternating rounds and the ratios of the
    medians: of packets/s (wall time: what the goal names, but it moves with the load and with
    where the scheduler puts the sender) and of the switch's CPU per frame (all its threads;
    BMv2 / ours, so above 1 means ours needs less)."""
    detail = f"{FRAMES} frames of {len(frame)} B, window {WINDOW}"
    subprocess.run([sys.executable, "-m", "p4switch.exec.prebuild", str(program)], check=True,
                   capture_output=True)  # no switch waits for a build of the mypyc backend's module
    targets = [f"ours:{backend}" for backend in native.BACKENDS]
    rates: dict[str, list[Rate]] = {t: [_veth_rate(t, program, routes, frame)] for t in targets}
    try:
        rates["bmv2"] = [_veth_rate("bmv2", program, routes, frame)]
    except TargetUnavailable as e:
        return [Result(f"{name} [{t[5:]}]", r[0].pps, "packets/s", f"p4switch process, {detail}, wall time; no BMv2 ratio: {e}")
                for t, r in rates.items()]
    for _ in range(ROUNDS - 1):
        for t in rates:
            rates[t].append(_veth_rate(t, program, routes, frame))
    medians = {t: (statistics.median(r.pps for r in rs), statistics.median(r.cpu_us_per_frame for r in rs))
               for t, rs in rates.items()}
    b_pps, b_cpu = medians.pop("bmv2")
    how = f"{tool('simple_switch_grpc')}, same sender, alternating rounds, median of {ROUNDS}"
    out = [Result(f"{name} (BMv2)", b_pps, "packets/s", how),
           Result(f"{name} (BMv2) switch CPU", b_cpu, "us/frame", how + "; all its threads")]
    for t, (pps, cpu) in medians.items():
        label = f"{name} [{t[5:]}]"
        out += [Result(label, pps, "packets/s", f"p4switch process, {detail}, wall time, median of {ROUNDS}"),
                Result(f"{label}: ours / BMv2", pps / b_pps if b_pps else 0.0, "x", "ratio of the medians, packets/s"),
                Result(f"{label} switch CPU", cpu, "us/frame", f"median of {ROUNDS}"),
                Result(f"{label}: BMv2 / ours CPU", b_cpu / cpu if cpu else 0.0, "x",
                       "ratio of the medians of CPU per frame (above 1: ours needs less)")]
    return out


def _basic_over_veths() -> list[Result]:
    routes = [(TABLE, {"hdr.ipv4.dstAddr": "10.0.2.0/24"}, FORWARD, {"dstAddr": "00:00:00:00:02:02", "port": 2})]
    return _side_by_side("switch basic L3 over veths", BASIC_P4, routes,
                         bytes(udp_frame("10.0.2.2", payload=b"x" * 64)))


def _fabric_over_veths() -> list[Result]:
    """fabric.p4 routing a UDP flow (route to port + next-hop MACs, p4src/README.md names)."""
    routes = [("FabricIngress.routing.routing_v4", {"hdr.ipv4.dst_addr": "10.0.2.0/24"},
               "FabricIngress.routing.route_to_port", {"port": 2}),
              ("FabricIngress.next_hop.next_hop_mac", {"standard_metadata.egress_spec": 2},
               "FabricIngress.next_hop.set_next_hop_macs", {"src_mac": "02:00:00:00:00:02", "dst_mac": "00:00:00:00:02:02"})]
    frame = bytes(udp_frame("10.0.2.2", payload=b"x" * 64))
    frame = bytes.fromhex("020000000001") + frame[6:]  # to the fabric switch's MAC
    return _side_by_side("switch fabric.p4 over veths", FABRIC_P4, routes, frame)


class _Sink:
    """A port that takes frames one by one or a poll's worth at once, as the packet-socket port does."""

    def send(self, frame: bytes) -> bool:
        return True

    def send_frames(self, frames: list[bytes]) -> int:
        return len(frames)


def device_workload(backend: str | None = None) -> tuple[Device, list[bytes]]:
    """A Device running basic L3 (port 1 -> 2) without sockets, and one read's worth of frames
    (``backend`` as for ``LoadedProgram.from_checked``)."""
    prog = LoadedProgram.from_checked(compile_file(str(BASIC_P4)), backend)
    prog.tables[TABLE].insert(TableEntry({"hdr.ipv4.dstAddr": Lpm(0x0A000200, 24)},
                                         ActionCall(FORWARD, {"dstAddr": 0x0202, "port": 2})))
    device = Device(cpu_port=CPU_PORT, clock=DilatedClock())
    device.add_port(1, _Sink())
    device.add_port(2, _Sink())
    device.set_program(prog)
    return device, [bytes(udp_frame("10.0.2.2", payload=b"x" * 64))] * IN_PROCESS_READ


def _in_process_rate(backend: str) -> Result:
    device, read = device_workload(backend)
    start = time.process_time()  # CPU time of this process: what one core does, load aside
    for _ in range(IN_PROCESS_FRAMES // IN_PROCESS_READ):  # as the I/O loop drives it: a read, then a poll
        device.receive_frames(1, read)
        device.poll()
    elapsed = time.process_time() - start
    assert device.stats["tx"] == IN_PROCESS_FRAMES
    return Result(f"switch basic L3 device in process [{backend}]", IN_PROCESS_FRAMES / elapsed, "packets/s",
                  f"Device: ingress + traffic manager + egress, reads of {IN_PROCESS_READ} frames, no sockets; CPU time")


def run() -> list[Result]:
    return [*(_in_process_rate(backend) for backend in native.BACKENDS), *_basic_over_veths(), *_fabric_over_veths()]
