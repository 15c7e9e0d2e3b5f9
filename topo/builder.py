"""Builds an N-spine x M-leaf x K-hosts-per-leaf fabric, or a three-tier fat tree
(``fat_tree``), in the topology file format.

Addressing plan (one rule, so a reader can predict every address):
- leaf L (1-based) owns 10.L.0.0/16; its host k sits alone in 10.L.k.0/24 as 10.L.k.2 with
  gateway 10.L.k.1 (the leaf's address on that port), so every host is one L3 hop from its leaf
  and spines route one /16 per leaf;
- MACs: host 02:00:0a:LL:kk:02, switch 02:aa:00:00:00:<device id>;
- device ids: leaves 1..M, spines 101..100+N (also the INT switch id);
- ports: on a leaf, 1..K face the hosts and K+1..K+N the spines (port K+s to spine s);
  on a spine, port L faces leaf L; the CPU port is 255 everywhere;
- gRPC: 127.0.0.1:<grpc_base + device id>.

``prefix`` is prepended to every node name so that two fabrics on one machine (tests running
in parallel) never share an interface name.
"""

from __future__ import annotations

import argparse
import sys

from topo.spec import Host, Link, Switch, Topology, TopologyError, dump, load, validate

SPINE_ID_BASE = 100


DEFAULT_RATE_GBPS = 100.0  # every link of a built topology unless told otherwise


def leaf_spine(
    spines: int = 2,
    leaves: int = 2,
    hosts_per_leaf: int = 2,
    *,
    rate_gbps: float = DEFAULT_RATE_GBPS,
    host_rate_gbps: float | None = None,
    delay_us: float = 1.0,
    time_dilation: float = 1.0,
    mtu: int = 1024,
    grpc_base: int = 50100,
    prefix: str = "",
) -> Topology:
    """The fabric as a validated Topology; raises ValueError for impossible sizes."""
    for what, n, hi in (("spines", spines, 99), ("leaves", leaves, 99), ("hosts_per_leaf", hosts_per_leaf, 99)):
        if not isinstance(n, int) or not 1 <= n <= hi:
            raise ValueError(f"{what} must be an integer 1..{hi}, got {n!r}")
    if hosts_per_leaf + spines >= 255:
        raise ValueError("a leaf needs hosts_per_leaf + spines ports below the CPU port 255")
    sw: list[Switch] = []
    hosts: list[Host] = []
    links: list[Link] = []
    for s in range(1, spines + 1):
        dev = SPINE_ID_BASE + s
        sw.append(Switch(f"{prefix}spine{s}", "spine", dev, grpc_base + dev, _switch_mac(dev), s))
    for leaf in range(1, leaves + 1):
        name = f"{prefix}leaf{leaf}"
        sw.append(Switch(name, "leaf", leaf, grpc_base + leaf, _switch_mac(leaf), leaf))
        for k in range(1, hosts_per_leaf + 1):
            h = f"{prefix}h{leaf}_{k}"
            hosts.append(Host(h, name, f"10.{leaf}.{k}.2", f"02:00:0a:{leaf:02x}:{k:02x}:02", f"10.{leaf}.{k}.1"))
            links.append(Link(h, 0, name, k, host_rate_gbps or rate_gbps, delay_us))
        for s in range(1, spines + 1):
            links.append(Link(name, hosts_per_leaf + s, f"{prefix}spine{s}", leaf, rate_gbps, delay_us))
    topo = Topology(
        name=f"{prefix}leafspine-{spines}x{leaves}x{hosts_per_leaf}",
        switches=sw,
        hosts=hosts,
        links=links,
        time_dilation=time_dilation,
        mtu=mtu,
    )
    validate(topo)
    return topo


AGG_ID_BASE = 200


def fat_tree(
    k: int = 4,
    *,
    rate_gbps: float = 100.0,
    delay_us: float = 1.0,
    time_dilation: float = 1.0,
    mtu: int = 1024,
    grpc_base: int = 50100,
    prefix: str = "",
) -> Topology:
    """The three-tier fat tree of parameter ``k`` (Al-Fares et al., SIGCOMM 2008): k pods of
    k/2 edge switches (role ``leaf``, k/2 hosts each) and k/2 aggregation switches (``agg``),
    and (k/2)^2 core switches (``spine``); k=4: 16 hosts, 20 switches; k=8: 128 hosts, 80.

    Addressing follows leaf_spine: edge switch L (1-based over all pods) owns 10.L.0.0/16 and
    its host j is 10.L.j.2. Device ids: edges 1.., cores 101.., aggregation 201... Ports: an
    edge switch has hosts on 1..k/2 and aggregation switch a of its pod on k/2+a; aggregation
    switch a has the pod's edges on 1..k/2 and cores (a-1)*k/2+c on k/2+c; core switch
    (a-1)*k/2+c has pod p's aggregation switch a on port p."""
    if not isinstance(k, int) or k < 2 or k % 2 or k > 16:
        raise ValueError(f"fat tree k must be an even integer 2..16, got {k!r}")
    half = k // 2
    sw: list[Switch] = []
    hosts: list[Host] = []
    links: list[Link] = []
    for c in range(1, half * half + 1):
        dev = SPINE_ID_BASE + c
        sw.append(Switch(f"{prefix}core{c}", "spine", dev, grpc_base + dev, _switch_mac(dev), c))
    for pod in range(1, k + 1):
        aggs = []
        for a in range(1, half + 1):
            idx = (pod - 1) * half + a
            dev = AGG_ID_BASE + idx
            name = f"{prefix}agg{idx}"
            aggs.append(name)
            sw.append(Switch(name, "agg", dev, grpc_base + dev, _switch_mac(dev), idx))
            for c in range(1, half + 1):
                links.append(Link(name, half + c, f"{prefix}core{(a - 1) * half + c}", pod, rate_gbps, delay_us))
        for e in range(1, half + 1):
            leaf = (pod - 1) * half + e
            name = f"{prefix}edge{leaf}"
            sw.append(Switch(name, "leaf", leaf, grpc_base + leaf, _switch_mac(leaf), leaf))
            for j in range(1, half + 1):
                h = f"{prefix}h{leaf}_{j}"
                hosts.append(Host(h, name, f"10.{leaf}.{j}.2", f"02:00:0a:{leaf:02x}:{j:02x}:02", f"10.{leaf}.{j}.1"))
                links.append(Link(h, 0, name, j, rate_gbps, delay_us))
            for a, agg in enumerate(aggs, 1):
                links.append(Link(name, half + a, agg, e, rate_gbps, delay_us))
    topo = Topology(name=f"{prefix}fattree-k{k}", switches=sw, hosts=hosts, links=links,
                    time_dilation=time_dilation, mtu=mtu)
    validate(topo)
    return topo


def _switch_mac(device_id: int) -> str:
    return f"02:aa:00:00:{device_id >> 8 & 0xFF:02x}:{device_id & 0xFF:02x}"


def main(argv: list[str] | None = None) -> int:
    """``python -m topo.builder``: write a leaf/spine topology file, or check one."""
    ap = argparse.ArgumentParser(prog="python -m topo.builder",
                                 description="Write an N-spine x M-leaf x K-host topology file (YAML or JSON by "
                                             "suffix), or validate an existing one with --check.")
    ap.add_argument("-o", "--output", help="file to write (.yaml, .yml or .json)")
    ap.add_argument("--check", metavar="FILE", help="validate FILE and print a summary instead")
    ap.add_argument("--spines", type=int, default=2)
    ap.add_argument("--leaves", type=int, default=2)
    ap.add_argument("--hosts-per-leaf", type=int, default=2)
    ap.add_argument("--rate-gbps", type=float, default=100.0, help="fabric link rate (default 100)")
    ap.add_argument("--host-rate-gbps", type=float, default=None, help="host link rate (default: as fabric links)")
    ap.add_argument("--delay-us", type=float, default=1.0, help="per-link propagation delay")
    ap.add_argument("--time-dilation", type=float, default=1.0)
    ap.add_argument("--mtu", type=int, default=1024)
    ap.add_argument("--grpc-base", type=int, default=50100, help="switch gRPC port = base + device id")
    args = ap.parse_args(argv)
    try:
        if args.check:
            t = load(args.check)
            print(f"{args.check}: {t.name}: {len(t.spines())} spines, {len(t.leaves())} leaves, "
                  f"{len(t.hosts)} hosts, {len(t.links)} links: valid")
            return 0
        if not args.output:
            ap.error("give -o FILE (or --check FILE)")
        t = leaf_spine(args.spines, args.leaves, args.hosts_per_leaf, rate_gbps=args.rate_gbps,
                       host_rate_gbps=args.host_rate_gbps, delay_us=args.delay_us,
                       time_dilation=args.time_dilation, mtu=args.mtu, grpc_base=args.grpc_base)
    except (TopologyError, ValueError) as e:
        print(f"topology: {e}", file=sys.stderr)
        return 2
    dump(t, args.output)
    print(f"wrote {args.output}: {t.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
