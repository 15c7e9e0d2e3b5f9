"""The whole path in process: a nicmodel ``Nic`` WRITEs 1 MiB through fabric.p4 on our executor
(INT source and to-host sink on the switch, so every data packet grows a hop and every ACK
echoes it) to a second ``Nic``, ACKs back through the switch, on a virtual clock. The figure
is data packets per second of CPU for NIC + switch + NIC together: the speed ceiling of a
virtual-time fabric that runs the real P4 program.

Run alone: ``python -m bench.bench_integ``.
"""

from __future__ import annotations

import time
from pathlib import Path

from bench.result import Result
from nicmodel import Nic, QpConfig
from p4rt.entries import ActionCall, Exact, Lpm, TableEntry, Ternary
from p4switch.exec import LoadedProgram, V1Pipeline

FABRIC = Path(__file__).resolve().parent.parent / "p4src" / "fabric.p4"
SIZE = 1 << 20
HOSTS = {1: ("02:00:00:00:00:0a", "10.0.1.1"), 2: ("02:00:00:00:00:0b", "10.0.2.2")}
SWITCH_MAC = {1: "02:00:00:00:01:01", 2: "02:00:00:00:01:02"}


def _mac(text: str) -> int:
    return int(text.replace(":", ""), 16)


def _ip(text: str) -> int:
    return int.from_bytes(bytes(int(x) for x in text.split(".")), "big")


def _switch() -> V1Pipeline:
    prog = LoadedProgram.from_file(FABRIC)
    t = prog.tables
    for port, (mac, ip) in HOSTS.items():
        t["FabricIngress.routing.routing_v4"].insert(TableEntry(
            {"hdr.ipv4.dst_addr": Lpm(_ip(ip), 32)}, ActionCall("FabricIngress.routing.route_to_port", {"port": port})))
        t["FabricIngress.next_hop.next_hop_mac"].insert(TableEntry(
            {"standard_metadata.egress_spec": Exact(port)},
            ActionCall("FabricIngress.next_hop.set_next_hop_macs",
                       {"src_mac": _mac(SWITCH_MAC[port]), "dst_mac": _mac(mac)})))
        t["FabricEgress.int_egress.int_transit_port"].insert(TableEntry(
            {"meta.out_port": Exact(port)},
            ActionCall("FabricEgress.int_egress.int_transit", {"switch_id_value": 1, "link_rate_mbps": 100_000})))
        t["FabricIngress.int_ingress.int_sink"].insert(TableEntry(
            {"standard_metadata.egress_spec": Exact(port)}, ActionCall("FabricIngress.int_ingress.int_sink_to_host")))
    t["FabricIngress.classify.classify"].insert(TableEntry(
        {"hdr.ipv4.dscp": Ternary(26, 0x3F)}, ActionCall("FabricIngress.classify.set_priority", {"priority": 3}), 10))
    t["FabricIngress.int_ingress.int_watchlist"].insert(TableEntry(
        {"hdr.ipv4.src_addr": Ternary(_ip(HOSTS[1][1]), 0xFFFFFFFF)},
        ActionCall("FabricIngress.int_ingress.int_source", {"max_hops": 5}), 10))
    return V1Pipeline(prog)


def bench_write_through_fabric() -> Result:
    pipe = _switch()
    nics = {port: Nic(mac, ip) for port, (mac, ip) in HOSTS.items()}
    a, b = nics[1], nics[2]
    qa = a.create_qp(QpConfig(mtu=1024))
    qb = b.create_qp(QpConfig(mtu=1024))
    qa.connect(SWITCH_MAC[1], HOSTS[2][1], qb.qpn, 0)
    qb.connect(SWITCH_MAC[2], HOSTS[1][1], qa.qpn, 0)
    data = bytes(range(256)) * (SIZE // 256)
    src = a.register_mr(bytearray(data))
    dst = b.register_mr(bytearray(SIZE))
    qa.post_write(wr_id=1, mr=src, offset=0, length=SIZE, remote_addr=dst.addr, rkey=dst.rkey)
    now = 0
    done = []
    t0 = time.process_time()
    while not done:
        for port, nic in nics.items():
            while (frame := nic.poll_transmit(now)) is not None:
                for out_port, out in pipe.process(port, frame, now // 1000):
                    nics[out_port].receive(out, now)
        done = a.poll_cq()
        wakes = [t for t in (a.next_wakeup(now), b.next_wakeup(now)) if t is not None]
        if not wakes:
            break
        now = max(now + 1, min(wakes))
    cpu = time.process_time() - t0
    ok = bool(done) and done[0].status.value == "success" and bytes(dst.buf) == data
    packets = SIZE // 1024
    return Result("NIC -> fabric.p4 (INT) -> NIC, 1 MiB WRITE in process", packets / cpu, "data packets/s",
                  f"{packets} packets + ACKs, {now / 1000:.0f} us of fabric time, data intact: {ok}")


def run() -> list[Result]:
    return [bench_write_through_fabric()]


if __name__ == "__main__":
    for r in run():
        print(f"{r.name}: {r.value:,.0f} {r.unit} ({r.detail})")
