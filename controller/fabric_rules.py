"""What fabric.p4 needs on each switch, computed from the topology and the settings.

This is the one module that knows fabric.p4's control-plane contract (p4src/README.md):
table, action, counter and register names, their keys and parameters, clone sessions and
units. Everything else in the controller is program-agnostic. Names are resolved by unique
suffix (``routing_v4`` -> ``FabricIngress.routing.routing_v4``) so the rules work with either
compiler's naming of nested control instances; key fields are filled in P4Info order.

Per switch it installs:
- routing: a leaf routes its hosts' /32s straight to their ports and every other leaf's /16
  to next-hop group 1 (all spine uplinks: ECMP selector group + ``lb_group`` member list);
  a spine routes each leaf's /16 to the port facing it; ``next_hop_mac`` per port;
- classes: RoCE data DSCP -> lossless priority, CNP/ACK/NAK -> high priority;
- load balancing per class (``lb_mode``): data by the profile (ECMP, DLB, spray), the rest ECMP;
- ECN Kmin/Kmax/Pmax on every port's data queue, converted from bytes to packets of the MTU;
- PFC XOFF/XON per ingress port on the lossless priority, plus its clone sessions;
- INT: source at leaves for RoCE data (watch list), transit hop records on every port, both
  within the ports' IP MTU, sink on leaf host ports (report to the controller, forward to the
  NIC for HPCC, or both), collector clone session to the CPU port (reports arrive as
  packet-ins, in the one report format).
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from controller.intent import Intent
from controller.routing import host_ports, mac_to_int, routes
from controller.settings import Settings, pfc_headroom_bytes
from nicmodel.int_md import encode_time_scale
from p4rt.entries import ActionCall, CloneSession, Exact, GroupRef, Lpm, Replica, TableEntry, Ternary
from p4rt.p4info import P4InfoIndex
from topo.spec import Link, Topology

# -- the contract (p4src/include/defines.p4, p4src/README.md) -------------------------------------
LB_MODE_CODE = {"ecmp": 0, "dlb": 1}
SPRAY_CODE = {"round_robin": 2, "random": 3, "best_of_two": 4}
LB_MAX_MEMBERS = 8
INT_REPORT_SESSION = 1
PFC_SESSION_BASE = 256  # clone session 256 + p sends PFC frames out of port p
PFC_COS = 7
REPORT_UDP_PORT = 32766
ROCE_UDP_PORT = 4791
ROCE_CNP_OPCODE = 0x81
ROCE_ACK_OPCODE = 0x11
PMAX_SCALE = 65536
PFC_QUANTA = 0xFFFF
UPLINK_GROUP = 1  # on a leaf, the next-hop group of all spine uplinks
# RoCEv2 WRITE packet around an MTU of payload: Ethernet 14, IPv4 20, UDP 8, BTH 12, RETH 16, ICRC 4.
ROCE_OVERHEAD = 74
LINK_IP_MTU = 1500  # IP MTU of the fabric's interfaces (Ethernet's and a veth's default): INT stays within it
COLLECTOR_IP = 0x0A00FFFE  # 10.0.255.254: the controller, as the reports' destination
# settings.INT_SINK_MODES -> int_sink action on a leaf's host ports
INT_SINK_ACTION = {"report": "int_sink_report", "echo": "int_sink_to_host",
                   "echo+report": "int_sink_to_host_and_report"}
DRE_PERIOD_NS = 64_000  # fabric.p4's port-load estimate halves about every 64 us
INT_DS_TIME_NS = 0x0001  # INT-MD ds_flags (p4src/include/defines.p4, INT_LAYOUT.md)
INT_DS_QUEUE_BYTES = 0x0002
_U32_MAX = (1 << 32) - 1


@dataclass(frozen=True)
class TargetUnits:
    """What the switches' v1model timestamps and INT queue occupancy count in: target options
    (p4src/README.md, "Target options"). BMv2, and our switch by default, count microseconds
    and packets; the virtual-time fabric nanoseconds and bytes. The program's time constants
    are set in timestamp ticks from the settings' microseconds, and the INT source tells the
    NICs the units in the INT-MD header."""

    timestamp_ns: int = 1000
    queue_bytes: bool = False
    # Timestamp ticks per fabric tick: 1 where the target's clock runs in fabric time (ours,
    # live or simulated); D on BMv2, whose timestamps are wall-clock microseconds while the
    # fabric runs D times slower (so a 100 us flowlet gap is D x 100 wall microseconds).
    time_scale: float = 1.0

    def ticks(self, us: float) -> int:
        """Fabric microseconds in timestamp ticks, at least 1; a 32-bit action parameter
        saturates (on BMv2 the 200 ms PFC stale time at D = 36,000 is 2 wall hours: capped at
        some 71 wall minutes, longer than any demo run, so the same in effect)."""
        return min(_U32_MAX, max(1, round(us * 1000 / self.timestamp_ns * self.time_scale)))

    @staticmethod
    def rate_mbps(fabric_gbps: float) -> int:
        """A link rate as INT carries it: Mb/s of fabric time, at any dilation (the INT-MD
        header's time scale tells the NIC how the hops' timestamps relate to fabric time)."""
        return max(1, round(fabric_gbps * 1000))

    @property
    def dre_shift(self) -> int:
        return round(math.log2(DRE_PERIOD_NS * self.time_scale / self.timestamp_ns))

    @property
    def int_ds_flags(self) -> int:
        return (INT_DS_TIME_NS if self.timestamp_ns == 1 else 0) | (INT_DS_QUEUE_BYTES if self.queue_bytes else 0)

    @property
    def int_time_scale(self) -> int:
        """The INT-MD time_scale field: timestamp ticks per fabric tick (nicmodel/int_md.py)."""
        return encode_time_scale(self.time_scale)


BMV2_UNITS = TargetUnits()


class Rules:
    """Entry builders over one P4Info: resolve a short name once, fill keys in P4Info order."""

    def __init__(self, p4: P4InfoIndex) -> None:
        self.p4 = p4

    def table(self, short: str) -> str:
        return self.p4.resolve("tables", short)

    def action(self, short: str, **params: int) -> ActionCall:
        return ActionCall(self.p4.resolve("actions", short), params)

    def entry(self, table: str, matches: list, action, priority: int = 0) -> tuple[str, TableEntry]:
        """``matches`` in key order; None leaves a ternary/lpm field out (wildcard)."""
        full = self.table(table)
        keys = self.p4.table_keys(full)
        if len(matches) != len(keys):
            raise ValueError(f"{full}: {len(keys)} key fields ({', '.join(k.name for k in keys)}), got {len(matches)}")
        match = {k.name: m for k, m in zip(keys, matches) if m is not None}
        return full, TableEntry(match=match, action=action, priority=priority)


def frame_bytes(topo: Topology) -> int:
    """Bytes of one full data packet on the wire (what a queue slot holds at most)."""
    return topo.mtu + ROCE_OVERHEAD


def bytes_to_pkts(nbytes: int, topo: Topology) -> int:
    return math.ceil(nbytes / frame_bytes(topo))


def pfc_headroom_pkts(topo: Topology, link: Link) -> int:
    """Queue slots a port's PFC headroom takes (``settings.pfc_headroom_bytes``)."""
    return bytes_to_pkts(pfc_headroom_bytes(link.rate_gbps, link.delay_us, frame_bytes(topo)), topo)


def lossless_queue_depth(topo: Topology, st: Settings) -> int:
    """The queue depth (packets) at which PFC keeps the lossless class lossless on every switch:
    fabric.p4 counts XOFF per ingress port, so one egress queue may receive XOFF plus headroom
    from every other port of its switch before all of them are paused (an incast, or two
    flows hashed onto one uplink). ``check_fits`` only refuses a queue one port overflows;
    experiments size their queues with this, with PFC on or off alike (a shared-buffer
    switch gives a congested port that much of its buffer)."""
    xoff = bytes_to_pkts(st.pfc.xoff_bytes, topo)
    need = 0
    for sw in topo.switches:
        heads = [pfc_headroom_pkts(topo, link) for _, _, link in topo.ports_of(sw.name).values()]
        need = max(need, sum(xoff + h for h in heads) - xoff - min(heads, default=0))
    return need


def build_intents(topo: Topology, settings: Settings, p4: P4InfoIndex,
                  clone_cos: bool = True, units: TargetUnits = BMV2_UNITS,
                  down: Collection[tuple[str, int]] = (),
                  pins: Mapping[str, Mapping[ipaddress.IPv4Network, int]] | None = None) -> dict[str, Intent]:
    """The whole desired state of every switch. ``clone_cos`` False (a BMv2 pipeline, whose
    P4Runtime layer refuses a class of service other than 0) writes PFC sessions with 0.
    ``units``: what the switches' timestamps and queue occupancy count in, and how many
    timestamp ticks make one fabric tick (``TargetUnits.time_scale``). ``down``: (switch, port)
    ends reported down, whose cables carry no route; ``pins``: per switch, routes pinned to a
    port (routing.routes)."""
    r = Rules(p4)
    return {s.name: _switch_intent(topo, settings, r, s.name, clone_cos, units, down, (pins or {}).get(s.name))
            for s in topo.switches}


def _switch_intent(topo: Topology, st: Settings, r: Rules, name: str, clone_cos: bool,
                   units: TargetUnits, down: Collection[tuple[str, int]],
                   pins: Mapping[ipaddress.IPv4Network, int] | None) -> Intent:
    it = Intent()
    _time_unit(units, r, it)
    _routing(topo, r, name, it, down, pins)
    _classes(st, r, it)
    _load_balancing(st, r, it, units)
    _ecn(topo, st, r, name, it)
    _pfc(topo, st, r, name, it, PFC_COS if clone_cos else 0, units)
    _int(topo, st, r, name, it, units)
    return it


def _time_unit(units: TargetUnits, r: Rules, it: Intent) -> None:
    """The program's defaults are BMv2's units; another target's are set here."""
    if units != BMV2_UNITS:
        it.set_default(r.table("time_unit"), r.action(
            "set_time_unit", dre_shift=units.dre_shift, int_ds_flags=units.int_ds_flags,
            int_time_scale=units.int_time_scale))


def _routing(topo: Topology, r: Rules, name: str, it: Intent, down: Collection[tuple[str, int]] = (),
             pins: Mapping[ipaddress.IPv4Network, int] | None = None) -> None:
    """Routes, and one next-hop group per distinct set of next hops: all uplinks share group
    UPLINK_GROUP while every cable is up; a cable reported down splits off the groups of the
    destinations it no longer reaches (numbered from UPLINK_GROUP + 1 in route order)."""
    sw = topo.switch(name)
    selector = r.p4.resolve("action_profiles", "ecmp_selector")
    group_of: dict[tuple[int, ...], int] = {}
    for route in routes(topo, name, down, pins):
        prefix = Lpm(int(route.prefix.network_address), route.prefix.prefixlen)
        if len(route.next_hops) == 1:
            it.add_entry(*r.entry("routing_v4", [prefix], r.action("route_to_port", port=route.next_hops[0].port)))
            continue
        ports = tuple(nh.port for nh in route.next_hops)[:LB_MAX_MEMBERS]
        known = ports in group_of
        group = group_of.setdefault(ports, UPLINK_GROUP + len(group_of))
        it.add_entry(*r.entry("routing_v4", [prefix], r.action("set_nh_group", group_id=group)))
        if known:
            continue
        for port in ports:
            it.add_member(selector, port, r.action("set_egress_port", port=port))
        it.add_group(selector, group, [(port, 1) for port in ports])
        it.add_entry(*r.entry("ecmp", [Exact(group)], GroupRef(group)))
        members = {f"port{i}": (ports[i] if i < len(ports) else 0) for i in range(LB_MAX_MEMBERS)}
        it.add_entry(*r.entry("lb_group", [Exact(group)], r.action("set_lb_members", count=len(ports), **members)))
    for port, (peer, _, _) in sorted(topo.ports_of(name).items()):
        peer_mac = topo.switch(peer).mac if peer in topo.switch_names() else topo.host(peer).mac
        it.add_entry(*r.entry("next_hop_mac", [Exact(port)],
                              r.action("set_next_hop_macs", src_mac=mac_to_int(sw.mac), dst_mac=mac_to_int(peer_mac))))


def _classes(st: Settings, r: Rules, it: Intent) -> None:
    """classify (dscp, is_roce, bth_opcode): CNP and ACK/NAK above data, by opcode or DSCP."""
    c = st.classes
    high = r.action("set_priority", priority=c.cnp_priority)
    it.add_entry(*r.entry("classify", [None, Ternary(1, 1), Ternary(ROCE_CNP_OPCODE, 0xFF)], high, priority=30))
    it.add_entry(*r.entry("classify", [None, Ternary(1, 1), Ternary(ROCE_ACK_OPCODE, 0xFF)], high, priority=30))
    it.add_entry(*r.entry("classify", [Ternary(c.cnp_dscp, 0x3F), None, None], high, priority=20))
    it.add_entry(*r.entry("classify", [Ternary(c.data_dscp, 0x3F), None, None],
                          r.action("set_priority", priority=c.data_priority), priority=10))
    it.set_default(r.table("classify"), r.action("set_priority", priority=c.default_priority))


def _lb_code(mode: str, spray_algo: str) -> int:
    return SPRAY_CODE[spray_algo] if mode == "spray" else LB_MODE_CODE[mode]


def _load_balancing(st: Settings, r: Rules, it: Intent, units: TargetUnits) -> None:
    """lb_mode (group, priority): the data class gets data_mode, every other class control_mode."""
    lb = st.lb
    # the parameter keeps its name from BMv2's microseconds; it counts timestamp ticks
    common = {"hash_qp": int(lb.hash_qp), "flowlet_timeout_us": units.ticks(lb.flowlet_timeout_us)}
    it.add_entry(*r.entry("lb_mode", [None, Ternary(st.classes.data_priority, 0x7)],
                          r.action("set_lb_mode", mode=_lb_code(lb.data_mode, lb.spray_algo), **common), priority=10))
    it.set_default(r.table("lb_mode"), r.action("set_lb_mode", mode=_lb_code(lb.control_mode, lb.spray_algo), **common))


def _ecn(topo: Topology, st: Settings, r: Rules, name: str, it: Intent) -> None:
    if not st.ecn.enabled:
        return
    kmin = bytes_to_pkts(st.ecn.kmin_bytes, topo)
    kmax = max(kmin + 1, bytes_to_pkts(st.ecn.kmax_bytes, topo))
    action = r.action("set_ecn_thresholds", kmin_pkts=kmin, kmax_pkts=kmax, pmax_scaled=round(st.ecn.pmax * PMAX_SCALE))
    for port in sorted(topo.ports_of(name)):
        it.add_entry(*r.entry("ecn_thresholds", [Exact(port), Exact(st.classes.data_priority)], action))


def pfc_refresh_us(link: Link) -> int:
    """How often a pause is re-sent while its port stays at or above XOFF (fabric us): half
    the pause it sends (PFC_QUANTA quanta of 512 bit times at the port's rate)."""
    return max(1, int(PFC_QUANTA * 512 / (link.rate_gbps * 1e3) / 2))


def _pfc(topo: Topology, st: Settings, r: Rules, name: str, it: Intent, cos: int, units: TargetUnits) -> None:
    for port in sorted(topo.ports_of(name)):
        it.add_clone_session(CloneSession(PFC_SESSION_BASE + port, [Replica(port, 0)], cos=cos))
    if not st.pfc.enabled:
        return
    xoff = bytes_to_pkts(st.pfc.xoff_bytes, topo)
    xon = min(xoff - 1, bytes_to_pkts(st.pfc.xon_bytes, topo))
    for port, (_, _, link) in sorted(topo.ports_of(name).items()):
        st.pfc.check_fits(topo.queue_depth_pkts, xoff, pfc_headroom_pkts(topo, link),
                          f"{name} port {port} ({link.rate_gbps:g} Gb/s, {link.delay_us:g} us cable)")
        it.add_entry(*r.entry("pfc_port", [Exact(port)], r.action(
            "set_pfc_port", enable_mask_value=1 << st.classes.data_priority, xoff_pkts=xoff, xon_pkts=max(0, xon),
            pause_quanta=PFC_QUANTA, refresh_us=units.ticks(pfc_refresh_us(link)),
            stale_us=units.ticks(st.pfc.stale_us))))


def _int(topo: Topology, st: Settings, r: Rules, name: str, it: Intent, units: TargetUnits = BMV2_UNITS) -> None:
    sw = topo.switch(name)
    cpu = sw.cpu_port
    it.add_clone_session(CloneSession(INT_REPORT_SESSION, [Replica(cpu, 0)]))
    it.set_default(r.table("int_report_encap"), r.action(
        "set_report_encap", src_mac=mac_to_int(sw.mac), dst_mac=mac_to_int(sw.mac), src_ip=0x0A00FF00 | sw.device_id & 0xFF,
        dst_ip=COLLECTOR_IP, udp_dport=REPORT_UDP_PORT, switch_id_value=sw.device_id))
    if not st.int.enabled:
        return
    for port, (_, _, link) in sorted(topo.ports_of(name).items()):
        it.add_entry(*r.entry("int_transit_port", [Exact(port)],
                              r.action("int_transit", switch_id_value=sw.device_id,
                                       link_rate_mbps=units.rate_mbps(link.rate_gbps))))
        it.add_entry(*r.entry("int_port_mtu", [Exact(port)], r.action("set_int_mtu", ip_mtu=LINK_IP_MTU)))
    if sw.role != "leaf":
        return
    if st.int.watch_data:
        it.add_entry(*r.entry("int_watchlist", [None, None, None, Ternary(ROCE_UDP_PORT, 0xFFFF)],
                              r.action("int_source", max_hops=st.int.max_hops), priority=10))
    sink = INT_SINK_ACTION[st.int.sink_mode]
    for port in host_ports(topo, name):
        it.add_entry(*r.entry("int_sink", [Exact(port)], r.action(sink)))


def nic_config(topo: Topology, st: Settings) -> dict[str, Any]:
    """What a NIC is configured with under ``st`` (also what `fabricctl diff` compares per NIC)."""
    return dict(cc=st.nic.cc, cc_params=dict(st.nic.cc_params), reliability=st.nic.reliability,
                loss_detection=st.nic.loss_detection, reorder_window_rtt=st.nic.reorder_window_rtt,
                mtu=topo.mtu, dscp=st.classes.data_dscp, priority=st.classes.data_priority, ecn=st.ecn.enabled)


def configure_nic(nic: Any, topo: Topology, host: str, st: Settings) -> None:
    """Congestion control and reliability of one NIC (applies to queue pairs created next)."""
    nic.configure(**nic_config(topo, st))


# -- telemetry reads -------------------------------------------------------------------------------
PORT_STATS = {
    # field: (kind, short name, index = port or port * 8 + priority, summed over priorities)
    "tx_bytes": ("registers", "port_tx_bytes", False),
    "qdepth": ("registers", "port_qdepth", False),
    "ecn_marks": ("counters", "ecn_marks", True),
    "pauses": ("counters", "pfc_pauses_sent", True),
    "drops": ("counters", "ingress_drops", True),
    "int_reports": ("counters", "int_reports", False),
}


# The comparison table's switch figures (controller/report.py rows) and the PORT_STATS field each
# is computed from; every other row comes from the NICs' statistics.
TABLE_FIGURES = {"mean fabric link util": "tx_bytes", "busiest link util": "tx_bytes", "PFC pauses sent": "pauses",
                 "ECN marks": "ecn_marks", "switch drops": "drops", "INT reports": "int_reports"}


def figure_sources(read_via: dict[str, str]) -> dict[str, str]:
    """Table row -> where its figure was read: the P4 object and the interface that read it
    (``FabricController.read_via``)."""
    out = {}
    for row, stat in TABLE_FIGURES.items():
        kind, short, _ = PORT_STATS[stat]
        out[row] = f"{kind[:-1]} {short}, {read_via.get(kind, 'not read')}"
    return out


# What a counter or register cell index stands for (p4src/README.md, "Registers" and "Counters"),
# so `fabricctl counters/registers` can say "port 3 (spine1) prio 3" rather than 27.
PORT_PRIO_INDEXED = {"tx_queue", "ecn_marks", "ingress_drops", "pfc_pauses_sent", "pfc_resumes_sent", "pfc_buffered",
                     "pfc_buffered_old", "pfc_epoch", "pfc_epoch_start", "pfc_paused", "pfc_last_pause"}
PORT_INDEXED = {"rx_port", "int_reports", "int_source_mtu_skips", "int_transit_mtu_skips", "port_qdepth",
                "port_tx_bytes", "port_dre_bytes", "port_dre_time"}
LB_MODE_NAMES = {code: name for name, code in {**LB_MODE_CODE, **SPRAY_CODE}.items()}  # lb_choices: port*8+mode
DROP_REASONS = {1: "malformed", 2: "IPv4 checksum", 3: "MAC control frame", 4: "not IPv4", 5: "TTL",
                6: "no route", 7: "no ECMP member", 8: "ACL drop", 9: "report without encap"}


def describe_index(topo: Topology, switch: str, name: str, index: int) -> str:
    """What cell ``index`` of counter/register ``name`` counts on ``switch``; "" if not known."""
    short = name.rsplit(".", 1)[-1]

    def port(p: int) -> str:
        if p == topo.switch(switch).cpu_port:
            return f"port {p} (cpu)"
        peer = topo.ports_of(switch).get(p)
        return f"port {p} ({peer[0]})" if peer else f"port {p}"

    if short in PORT_PRIO_INDEXED:
        return f"{port(index // 8)} prio {index % 8}"
    if short == "lb_choices":
        return f"{port(index // 8)} {LB_MODE_NAMES.get(index % 8, f'mode {index % 8}')}"
    if short in PORT_INDEXED:
        return port(index)
    if short == "drop_reasons":
        return DROP_REASONS.get(index, "")
    return ""


def stat_cells(ports: list[int], per_prio: bool) -> dict[int, int]:
    """Cell index -> port of a ``PORT_STATS`` statistic's cells for ``ports``: the port
    itself, or port * 8 + priority for each priority where it is kept per priority."""
    return {p * 8 + c: p for p in ports for c in range(8)} if per_prio else {p: p for p in ports}


def read_port_stats(ctl: Any, switch: str, ports: list[int] | None = None) -> dict[int, dict[str, int]]:
    """port -> {tx_bytes, qdepth, ecn_marks, pauses, drops, int_reports} of one switch's
    ``ports`` (default: those the topology uses, in order): only their cells, in two Reads
    (the registers', then the counters')."""
    if ports is None:
        ports = sorted(ctl.topo.ports_of(switch))
    out: dict[int, dict[str, int]] = {p: {} for p in ports}
    for kind in ("registers", "counters"):  # one Read for each kind (BMv2 reads registers apart)
        stats = {field: (ctl.p4.resolve(kind, short), stat_cells(ports, per_prio))
                 for field, (k, short, per_prio) in PORT_STATS.items() if k == kind}
        cells = {name: list(index) for name, index in stats.values()}
        values = ctl.read_registers(switch, cells) if kind == "registers" else ctl.read_counters(switch, cells)
        for field, (name, index) in stats.items():
            for i, v in values[name].items():
                total = out[index[i]]
                total[field] = total.get(field, 0) + (v if kind == "registers" else v[0])
    return out
