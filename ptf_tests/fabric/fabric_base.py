"""Base of the fabric.p4 PTF tests: installs entries by the names in p4src/README.md over
P4Runtime (target-agnostic) and collects frames from the PTF ports.

Topology of every test: the switch has ports 1..4; port 1 faces the sending host, ports 2..4
are next hops (neighbour MAC ``00:00:00:00:0p:0p``); the switch's MAC on port p is
``02:00:00:00:00:0p``. Queue rates changed by a test are set back to unlimited-in-practice
in tearDown, and tearDown then waits until the switch has sent what it still held: BMv2 fixes
each frame's departure time when it enqueues it (``last_sent + 1/rate``), so frames queued
behind a slow rate keep leaving at that rate after the rate is restored and would otherwise
arrive in the next test's capture.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from p4.v1 import p4runtime_pb2
from ptf import testutils

from p4rt.p4info import encode
from ptf_tests.base import P4RuntimeTest
from ptf_tests.fabric.fabric_packets import routed

SW_MAC = "02:00:00:00:00:01"
NEIGHBOUR = {p: f"00:00:00:00:0{p}:0{p}" for p in range(1, 5)}
PORT_MAC = {p: f"02:00:00:00:00:0{p}" for p in range(1, 5)}
FAST_PPS = 100000

LB_ECMP, LB_DLB, LB_SPRAY_RR, LB_SPRAY_RANDOM, LB_SPRAY_BEST_OF_TWO = range(5)
PRIO_ROCE = 3
INT_REPORT_SESSION = 1
PFC_SESSION_BASE = 256


def quiet_after(pps: int) -> float:
    """Seconds of silence after which a queue paced at ``pps`` is empty: two departure gaps
    (frames queued at that rate keep that spacing, on BMv2 even after the rate is raised)."""
    return 2.0 / pps + 0.3


class FabricTest(P4RuntimeTest):
    def setUp(self) -> None:
        super().setUp()
        self._slowed: dict[int, int] = {}
        self._defaults: list[p4runtime_pb2.Entity] = []

    def tearDown(self) -> None:
        try:
            for port in self._slowed:
                self.cli(f"set_queue_rate {FAST_PPS} {port}")
            for entity in self._defaults:
                self.client.modify(entity)
            if self._slowed:
                self.drain(quiet=quiet_after(min(self._slowed.values())))
        finally:
            super().tearDown()

    # ---- control plane ---------------------------------------------------------------------
    def add(self, table: str, match: dict, action: str, params: dict | None = None, priority: int = 0) -> None:
        self.client.insert(self.client.table_entry(table, match, action, params or {}, priority=priority))

    def next_hops(self, *ports: int) -> None:
        for p in ports:
            self.add("FabricIngress.next_hop.next_hop_mac", {"standard_metadata.egress_spec": p},
                     "FabricIngress.next_hop.set_next_hop_macs",
                     {"src_mac": PORT_MAC[p], "dst_mac": NEIGHBOUR[p]})

    def route_to_port(self, prefix: str, port: int) -> None:
        self.add("FabricIngress.routing.routing_v4", {"hdr.ipv4.dst_addr": prefix},
                 "FabricIngress.routing.route_to_port", {"port": port})

    def route_to_group(self, prefix: str, group: int) -> None:
        self.add("FabricIngress.routing.routing_v4", {"hdr.ipv4.dst_addr": prefix},
                 "FabricIngress.routing.set_nh_group", {"group_id": group})

    def ecmp_group(self, group: int, ports: list[int]) -> None:
        """An action-selector group of ``ports`` and the ``ecmp`` entry pointing at it."""
        info = self.client.p4info
        profile = info.get("action_profiles", "FabricIngress.routing.ecmp_selector")
        action = info.get("actions", "FabricIngress.routing.set_egress_port")
        members = []
        for i, port in enumerate(ports):
            member_id = group * 100 + i + 1
            entity = p4runtime_pb2.Entity()
            m = entity.action_profile_member
            m.action_profile_id = profile.preamble.id
            m.member_id = member_id
            m.action.action_id = action.preamble.id
            m.action.params.add(param_id=action.params[0].id, value=encode(port, action.params[0].bitwidth))
            self.client.insert(entity)
            members.append(member_id)
        entity = p4runtime_pb2.Entity()
        g = entity.action_profile_group
        g.action_profile_id = profile.preamble.id
        g.group_id = group
        g.max_size = 8
        for member_id in members:
            g.members.add(member_id=member_id, weight=1)
        self.client.insert(entity)
        entry = self.client.table_entry("FabricIngress.routing.ecmp", {"meta.nh_group": group})
        entry.table_entry.action.action_profile_group_id = group
        self.client.insert(entry)

    def lb_group(self, group: int, ports: list[int]) -> None:
        params = {"count": len(ports)}
        params.update({f"port{i}": (ports[i] if i < len(ports) else 0) for i in range(8)})
        self.add("FabricIngress.routing.lb_group", {"meta.nh_group": group},
                 "FabricIngress.routing.set_lb_members", params)

    def lb_mode(self, group: int, mode: int, hash_qp: int = 0, flowlet_timeout_us: int = 0) -> None:
        self.add("FabricIngress.routing.lb_mode", {"meta.nh_group": (group, 0xFFFF)},
                 "FabricIngress.routing.set_lb_mode",
                 {"mode": mode, "hash_qp": hash_qp, "flowlet_timeout_us": flowlet_timeout_us}, priority=10)

    def classify_roce(self) -> None:
        """DSCP 26 (RoCE data) -> priority 3."""
        self.add("FabricIngress.classify.classify", {"hdr.ipv4.dscp": (26, 0x3F)},
                 "FabricIngress.classify.set_priority", {"priority": PRIO_ROCE}, priority=10)

    def ecn_thresholds(self, port: int, prio: int, kmin: int, kmax: int, pmax: float) -> None:
        self.add("FabricEgress.ecn.ecn_thresholds", {"standard_metadata.egress_port": port, "meta.prio": prio},
                 "FabricEgress.ecn.set_ecn_thresholds",
                 {"kmin_pkts": kmin, "kmax_pkts": kmax, "pmax_scaled": round(pmax * 65536)})

    def clone_session(self, session: int, port: int) -> None:
        self.client.insert(self.client.clone_session(session, [port]))

    def set_default(self, table: str, action: str, params: dict, reset_action: str = "NoAction") -> None:
        """Set a table's default action; tearDown puts ``reset_action`` back."""
        self.client.modify(self.client.table_entry(table, None, action, params, default=True))
        self._defaults.append(self.client.table_entry(table, None, reset_action, {}, default=True))

    def queue_rate(self, port: int, pps: int) -> None:
        self.cli(f"set_queue_rate {pps} {port}")
        self._slowed[port] = min(pps, self._slowed.get(port, pps))

    def drain(self, quiet: float = 1.0, timeout: float = 120.0) -> list[tuple[int, bytes]]:
        """Every frame until the switch has emptied its queues: none for ``quiet`` seconds
        (see :func:`quiet_after`)."""
        got: list[tuple[int, bytes]] = []
        deadline = time.monotonic() + timeout
        while (item := self.receive(timeout=quiet)) is not None:
            got.append(item)
            self.assertLess(time.monotonic(), deadline, "timed out waiting for the switch queues to drain")
        return got

    def counter(self, name: str, index: int) -> int:
        return self.client.read_counter(name, index)[0]

    def register(self, name: str, index: int) -> int:
        """One register cell, through the runtime CLI both targets speak."""
        out = self.cli(f"register_read {name} {index}")
        found = re.search(rf"{name}\[{index}\]\s*=\s*(\d+)", out)
        self.assertIsNotNone(found, out)
        return int(found.group(1))

    def wait_until(self, condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
        """Until ``condition()`` holds; fails naming ``what`` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not condition():
            self.assertLess(time.monotonic(), deadline, f"timed out waiting until {what}")
            time.sleep(0.02)

    def ingress_seen(self, port: int, count: int, since: int) -> None:
        """Until ingress has taken ``count`` more frames from ``port`` than the ``rx_port``
        counter read ``since``: their forwarding decisions are made."""
        self.wait_until(lambda: self.counter("FabricIngress.counters.rx_port", port) - since >= count,
                        f"ingress took {count} frames from port {port}")

    @staticmethod
    def wait_past(start: float, seconds: float) -> None:
        """Until ``seconds`` of wall time have passed since ``start`` (time.monotonic()): for
        the program's own timers (flowlet gap, pause refresh, stale time), where elapsed time
        is the condition."""
        time.sleep(max(0.0, start + seconds - time.monotonic()))

    # ---- data plane ------------------------------------------------------------------------
    def send(self, port: int, frame: bytes) -> None:
        testutils.send_packet(self, port, frame)

    def receive(self, timeout: float = 2.0) -> tuple[int, bytes] | None:
        """The next frame from any port, or None after ``timeout`` seconds of silence."""
        result = testutils.dp_poll(self, timeout=timeout)
        if isinstance(result, self.dataplane.PollSuccess):
            return result.port, bytes(result.packet)
        return None

    def collect(self, count: int, timeout: float = 10.0) -> list[tuple[int, bytes]]:
        """``count`` frames (port, bytes) in arrival order; fails if they do not all come."""
        got: list[tuple[int, bytes]] = []
        deadline = time.monotonic() + timeout
        while len(got) < count and time.monotonic() < deadline:
            item = self.receive(timeout=max(0.05, deadline - time.monotonic()))
            if item is not None:
                got.append(item)
        self.assertEqual(len(got), count, f"received {len(got)} of {count} frames: {got}")
        return got

    def assert_silent(self, timeout: float = 0.5) -> None:
        item = self.receive(timeout=timeout)
        self.assertIsNone(item, f"unexpected frame {item}")

    def forwarded(self, frame: bytes, port: int, ecn: int | None = None) -> bytes:
        return routed(frame, PORT_MAC[port], NEIGHBOUR[port], ecn)
