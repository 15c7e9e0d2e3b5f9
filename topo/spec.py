"""The topology file: what a leaf/spine fabric is made of, as plain data.

One format serves the builder (which writes it), the Mininet launcher (which starts switch
processes and hosts from it) and the controller (which derives routes, groups and thresholds
from it), so all three agree on port numbers and addresses without talking to each other.
The file is YAML or JSON (same keys); :func:`load` and :func:`dump` pick by file suffix.

Keys (rates in Gb/s of *fabric* time; ``time_dilation`` says how much slower wall time runs)::

    name: leafspine-2x2x2
    time_dilation: 2000          # fabric runs D times slower than wall time
    mtu: 1024                    # RoCE payload MTU used by the NICs (bytes)
    queue_depth_pkts: 128        # optional: every switch queue's depth in packets (default 128)
    switches:
      - {name: leaf1, role: leaf, device_id: 1, grpc_port: 50101, cpu_port: 255,
         mac: "02:aa:00:00:00:01", index: 1}
    hosts:
      - {name: h1_1, leaf: leaf1, ip: 10.1.1.2, prefix_len: 24, mac: "02:00:0a:01:01:02",
         gateway: 10.1.1.1}
    links:
      - {a: h1_1, a_port: 0, b: leaf1, b_port: 1, rate_gbps: 100, delay_us: 1}
      - {a: leaf1, a_port: 3, b: spine1, b_port: 1, rate_gbps: 100, delay_us: 1}
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import MISSING, asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

# leaf: hosts attach here (the ToR, or a fat tree's edge); agg: a fat tree's aggregation tier
# (leaves below, spines above); spine: the top tier (a fat tree's core)
ROLES = ("leaf", "agg", "spine")
TIER = {"leaf": 0, "agg": 1, "spine": 2}
# Per queue (port x priority) of our target: above PFC XOFF and ECN Kmax at the default MTU, so
# the controller's thresholds act before the traffic manager tail-drops.
DEFAULT_QUEUE_DEPTH_PKTS = 128
MAX_QUEUE_DEPTH_PKTS = 65535
_MAC_RE = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")
_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,9}$")  # short: Mininet builds iface names from it


class TopologyError(ValueError):
    """A topology that cannot be built; the message lists every problem found."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("invalid topology:\n  " + "\n  ".join(problems))


@dataclass
class Switch:
    name: str
    role: str
    device_id: int
    grpc_port: int
    mac: str
    index: int  # leaf/spine number within its role, 1-based (used in addresses)
    cpu_port: int = 255


@dataclass
class Host:
    name: str
    leaf: str
    ip: str
    mac: str
    gateway: str
    prefix_len: int = 24


@dataclass
class Link:
    a: str
    a_port: int
    b: str
    b_port: int
    rate_gbps: float = 100.0
    delay_us: float = 1.0

    def other(self, node: str) -> tuple[str, int]:
        """The far end (node, port) seen from ``node``."""
        return (self.b, self.b_port) if node == self.a else (self.a, self.a_port)

    def port_of(self, node: str) -> int:
        return self.a_port if node == self.a else self.b_port


@dataclass
class Topology:
    name: str
    switches: list[Switch]
    hosts: list[Host]
    links: list[Link]
    time_dilation: float = 1.0
    mtu: int = 1024
    queue_depth_pkts: int = DEFAULT_QUEUE_DEPTH_PKTS
    extra: dict[str, Any] = field(default_factory=dict)

    # -- lookups -------------------------------------------------------------------------
    def switch(self, name: str) -> Switch:
        for s in self.switches:
            if s.name == name:
                return s
        raise KeyError(f"no switch named {name!r} (switches: {', '.join(self.switch_names())})")

    def host(self, name: str) -> Host:
        for h in self.hosts:
            if h.name == name:
                return h
        raise KeyError(f"no host named {name!r}")

    def switch_names(self) -> list[str]:
        return [s.name for s in self.switches]

    def leaves(self) -> list[Switch]:
        return [s for s in self.switches if s.role == "leaf"]

    def spines(self) -> list[Switch]:
        return [s for s in self.switches if s.role == "spine"]

    def aggs(self) -> list[Switch]:
        return [s for s in self.switches if s.role == "agg"]

    def hosts_of(self, leaf: str) -> list[Host]:
        return [h for h in self.hosts if h.leaf == leaf]

    def links_of(self, node: str) -> list[Link]:
        return [link for link in self.links if node in (link.a, link.b)]

    def ports_of(self, switch: str) -> dict[int, tuple[str, int, Link]]:
        """port -> (neighbour, neighbour port, link) for one switch."""
        out: dict[int, tuple[str, int, Link]] = {}
        for link in self.links_of(switch):
            peer, peer_port = link.other(switch)
            out[link.port_of(switch)] = (peer, peer_port, link)
        return out

    def host_port(self, host: str) -> tuple[str, int]:
        """(leaf, leaf port) a host is attached to."""
        for link in self.links_of(host):
            return link.other(host)
        raise KeyError(f"host {host!r} has no link")

    def leaf_subnet(self, leaf: str) -> ipaddress.IPv4Network:
        """The aggregate a spine routes towards a leaf: 10.<leaf index>.0.0/16."""
        return ipaddress.ip_network(f"10.{self.switch(leaf).index}.0.0/16")

    # -- (de)serialisation ----------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "name": self.name,
            "time_dilation": self.time_dilation,
            "mtu": self.mtu,
            "queue_depth_pkts": self.queue_depth_pkts,
            "switches": [asdict(s) for s in self.switches],
            "hosts": [asdict(h) for h in self.hosts],
            "links": [asdict(link) for link in self.links],
        }
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, d: Any) -> Topology:
        """Parse and validate; every problem is reported at once in a TopologyError."""
        if not isinstance(d, dict):
            raise TopologyError(["the topology must be a mapping with switches, hosts, links"])
        problems: list[str] = []
        known = {"name", "time_dilation", "mtu", "queue_depth_pkts", "switches", "hosts", "links"}
        switches = _parse_list(d, "switches", Switch, problems)
        hosts = _parse_list(d, "hosts", Host, problems)
        links = _parse_list(d, "links", Link, problems)
        topo = cls(
            name=str(d.get("name", "fabric")),
            switches=switches,
            hosts=hosts,
            links=links,
            time_dilation=d.get("time_dilation", 1.0),
            mtu=d.get("mtu", 1024),
            queue_depth_pkts=d.get("queue_depth_pkts", DEFAULT_QUEUE_DEPTH_PKTS),
            extra={k: v for k, v in d.items() if k not in known},
        )
        if problems:
            raise TopologyError(problems)
        validate(topo)
        return topo


def _parse_list(d: dict, key: str, kind: type, problems: list[str]) -> list:
    items = d.get(key)
    if not isinstance(items, list) or not items:
        problems.append(f"{key}: must be a non-empty list")
        return []
    fields = kind.__dataclass_fields__
    required = [n for n, f in fields.items() if f.default is MISSING and f.default_factory is MISSING]
    out = []
    for i, item in enumerate(items):
        where = f"{key}[{i}]"
        if not isinstance(item, dict):
            problems.append(f"{where}: must be a mapping")
            continue
        unknown = sorted(set(item) - set(fields))
        missing = [n for n in required if n not in item]
        if unknown:
            problems.append(f"{where}: unknown key(s) {', '.join(unknown)}")
        if missing:
            problems.append(f"{where}: missing key(s) {', '.join(missing)}")
        if unknown or missing:
            continue
        out.append(kind(**item))
    return out



def validate(topo: Topology) -> None:
    """Check everything the launcher and controller rely on; raise TopologyError listing all."""
    p: list[str] = []
    if not isinstance(topo.time_dilation, (int, float)) or topo.time_dilation < 1:
        p.append(f"time_dilation: must be a number >= 1, got {topo.time_dilation!r}")
    if not isinstance(topo.mtu, int) or not 256 <= topo.mtu <= 4096:
        p.append(f"mtu: must be an integer 256..4096, got {topo.mtu!r}")
    depth = topo.queue_depth_pkts
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_QUEUE_DEPTH_PKTS:
        p.append(f"queue_depth_pkts: must be an integer 1..{MAX_QUEUE_DEPTH_PKTS} (packets per switch queue), "
                 f"got {depth!r}")
    names: dict[str, str] = {}
    for kind, nodes in (("switch", topo.switches), ("host", topo.hosts)):
        for n in nodes:
            if not isinstance(n.name, str) or not _NAME_RE.match(n.name):
                p.append(f"{kind} {n.name!r}: name must be a letter then up to 9 letters/digits/_")
            if n.name in names:
                p.append(f"{kind} {n.name!r}: name already used by a {names[n.name]}")
            names[n.name] = kind
            if not isinstance(n.mac, str) or not _MAC_RE.match(n.mac):
                p.append(f"{kind} {n.name}: mac {n.mac!r} is not aa:bb:cc:dd:ee:ff (lower case)")
    _check_unique(p, "device_id", [(s.name, s.device_id) for s in topo.switches])
    _check_unique(p, "grpc_port", [(s.name, s.grpc_port) for s in topo.switches])
    _check_unique(p, "mac", [(n.name, n.mac) for n in [*topo.switches, *topo.hosts]])
    for s in topo.switches:
        if s.role not in ROLES:
            p.append(f"switch {s.name}: role {s.role!r} is not one of {', '.join(ROLES)}")
        if not isinstance(s.device_id, int) or s.device_id < 0:
            p.append(f"switch {s.name}: device_id must be a non-negative integer")
        if not isinstance(s.grpc_port, int) or not 1024 <= s.grpc_port <= 65535:
            p.append(f"switch {s.name}: grpc_port must be 1024..65535")
        if not isinstance(s.cpu_port, int) or not 1 <= s.cpu_port <= 510:
            p.append(f"switch {s.name}: cpu_port must be 1..510")
    _check_unique(p, "index", [(s.name, (s.role, s.index)) for s in topo.switches])
    roles = {s.name: s.role for s in topo.switches}
    ips: dict[str, str] = {}
    for h in topo.hosts:
        if roles.get(h.leaf) != "leaf":
            p.append(f"host {h.name}: leaf {h.leaf!r} is not a leaf switch")
        try:
            iface = ipaddress.ip_interface(f"{h.ip}/{h.prefix_len}")
            gw = ipaddress.ip_address(h.gateway)
        except ValueError as e:
            p.append(f"host {h.name}: {e}")
            continue
        if iface.version != 4:
            p.append(f"host {h.name}: ip must be IPv4")
        elif gw not in iface.network or gw == iface.ip:
            p.append(f"host {h.name}: gateway {h.gateway} is not another address in {iface.network}")
        if h.ip in ips:
            p.append(f"host {h.name}: ip {h.ip} already used by {ips[h.ip]}")
        ips[h.ip] = h.name
        if roles.get(h.leaf) == "leaf":
            leaf_net = topo.leaf_subnet(h.leaf)
            if iface.ip not in leaf_net:
                p.append(f"host {h.name}: ip {h.ip} is outside its leaf's subnet {leaf_net}")
    used: dict[tuple[str, int], int] = {}
    for i, link in enumerate(topo.links):
        where = f"links[{i}] {link.a}:{link.a_port}-{link.b}:{link.b_port}"
        for node, port in ((link.a, link.a_port), (link.b, link.b_port)):
            if node not in names:
                p.append(f"{where}: unknown node {node!r}")
                continue
            if not isinstance(port, int) or port < 0 or (names[node] == "switch" and not 1 <= port <= 510):
                p.append(f"{where}: bad port {port!r} on {node}")
            elif roles.get(node) and port == topo.switch(node).cpu_port:
                p.append(f"{where}: port {port} is {node}'s CPU port")
            if (node, port) in used:
                p.append(f"{where}: {node} port {port} already used by links[{used[(node, port)]}]")
            used[(node, port)] = i
        if link.a == link.b:
            p.append(f"{where}: a link must join two different nodes")
        if not isinstance(link.rate_gbps, (int, float)) or link.rate_gbps <= 0:
            p.append(f"{where}: rate_gbps must be > 0")
        if not isinstance(link.delay_us, (int, float)) or link.delay_us < 0:
            p.append(f"{where}: delay_us must be >= 0")
        kinds = {names.get(link.a), names.get(link.b)}
        ends = {roles.get(link.a), roles.get(link.b)}
        if kinds == {"switch"} and ends <= set(ROLES) and ends not in ({"leaf", "spine"}, {"leaf", "agg"},
                                                                        {"agg", "spine"}):
            p.append(f"{where}: switch links must join two tiers (leaf-spine, leaf-agg or agg-spine)")
        if kinds == {"host"}:
            p.append(f"{where}: hosts must attach to a leaf, not to each other")
    for h in topo.hosts:
        attached = [link.other(h.name) for link in topo.links_of(h.name)]
        if len(attached) != 1 or attached[0][0] != h.leaf:
            p.append(f"host {h.name}: needs exactly one link, to its leaf {h.leaf}")
    for leaf in topo.leaves():
        uplinks = {peer for peer, _, _ in topo.ports_of(leaf.name).values() if roles.get(peer) in ("agg", "spine")}
        if len(topo.switches) > len(topo.leaves()) and not uplinks:
            p.append(f"leaf {leaf.name}: has no link to any spine or aggregation switch")
    if p:
        raise TopologyError(p)


def _check_unique(p: list[str], what: str, pairs: list[tuple[str, Any]]) -> None:
    seen: dict[Any, str] = {}
    for name, value in pairs:
        if value in seen:
            p.append(f"{what} {value!r} of {name} is already used by {seen[value]}")
        else:
            seen[value] = name


def load(path: str | Path) -> Topology:
    """Read a topology file (.yaml/.yml or .json) and validate it."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise TopologyError([f"{path}: {e.strerror}"]) from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as e:
        raise TopologyError([f"{path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {e}"]) from None
    return Topology.from_dict(data)


def dump(topo: Topology, path: str | Path) -> None:
    path = Path(path)
    d = topo.to_dict()
    path.write_text(json.dumps(d, indent=2) + "\n" if path.suffix == ".json" else yaml.safe_dump(d, sort_keys=False))
