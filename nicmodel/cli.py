"""``rnic``: run the RoCEv2 NIC model from the shell.

    rnic serve --iface h1-eth0 --ip 10.0.1.1 --mac 02:00:00:00:01:01 --mgmt /tmp/h1.sock
    rnic stats --mgmt /tmp/h1.sock
    rnic status --mgmt /tmp/h1.sock
    rnic workload --mgmt /tmp/h1.sock --spec spec.json --wait

``serve`` puts a live NIC on an interface with the management API (nicmodel/mgmt.py) on a
Unix socket; ``stats``/``status`` query a serving NIC; ``workload`` starts a workload on
a serving NIC (the management API's ``start_workload``) and, with ``--wait``, follows it to
the end. The simulator that runs NICs without interfaces is the virtual-time fabric
(``fabricctl sim run``, and ``fabricsim-ref`` for the fast reference switch model).
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from netbase.packet_socket import PacketSocketPort
from nicmodel.hw_counters import format_hw
from nicmodel.live import LiveNic
from nicmodel.mgmt import MgmtError, MgmtServer, NicClient
from nicmodel.settings import CC_ALGORITHMS, IB_MTUS, LOSS_DETECTION, RELIABILITY, NicSettings

_UNITS = {"": 1, "k": 1000, "kb": 1000, "kib": 1024, "m": 10**6, "mb": 10**6, "mib": 1 << 20,
          "g": 10**9, "gb": 10**9, "gib": 1 << 30}


def parse_size(text: str) -> int:
    """``64KiB``, ``1MB``, ``4096`` -> bytes."""
    t = text.strip().lower()
    num = t.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = t[len(num):]
    try:
        value = float(num) * _UNITS[unit]
    except (ValueError, KeyError):
        raise argparse.ArgumentTypeError(f"bad size {text!r} (e.g. 4096, 64KiB, 1MB)") from None
    if value < 1 or value != int(value):
        raise argparse.ArgumentTypeError(f"size {text!r} must be a whole number of bytes >= 1")
    return int(value)


def parse_rate(text: str) -> float:
    """``100e9``, ``100G``, ``25Gbps`` -> bit/s."""
    t = text.strip().lower().removesuffix("bps").removesuffix("b/s")
    mult = {"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}.get(t[-1:], 1.0)
    try:
        value = float(t[:-1] if t[-1:] in "kmgt" else t) * mult
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad rate {text!r} (e.g. 100e9, 100G)") from None
    if not value > 0 or not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"rate {text!r} must be positive")
    return value


def parse_params(items: list[str] | None) -> dict[str, Any]:
    """``--cc-param g=0.01 --cc-param timer_ns=30000`` -> dict (numbers parsed)."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise argparse.ArgumentTypeError(f"bad --cc-param {item!r}: use NAME=VALUE")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def add_transport_args(p: argparse.ArgumentParser) -> None:
    """The NIC settings (``nicmodel.settings``: names, defaults and allowed values from there)."""
    d = NicSettings()
    p.add_argument("--cc", choices=sorted(CC_ALGORITHMS), default=d.cc, help="congestion control")
    p.add_argument("--cc-param", action="append", metavar="NAME=VALUE",
                   help="override a congestion-control parameter (repeatable)")
    p.add_argument("--reliability", choices=RELIABILITY, default=d.reliability,
                   help="Go-Back-N or selective repeat")
    p.add_argument("--loss-detection", choices=LOSS_DETECTION, default=d.loss_detection,
                   help="selective repeat: judge holes lost by time (rack, RFC 8985; tolerates "
                        "spraying) or by a duplicate threshold (count)")
    p.add_argument("--reorder-window-rtt", type=float, default=d.reorder_window_rtt,
                   metavar="RTTS", help="rack: reordering tolerated, in minimum RTTs (default %(default)s)")
    p.add_argument("--mtu", type=int, default=d.mtu, choices=IB_MTUS)
    p.add_argument("--dscp", type=int, default=d.dscp, help=f"DSCP of RoCE traffic (default {d.dscp})")
    p.add_argument("--priority", type=int, default=d.priority, help=f"PFC priority class (default {d.priority})")
    p.add_argument("--line-rate", type=parse_rate, default=100e9, help="fabric bit/s (default 100G)")


def transport_settings(args: argparse.Namespace, base_rtt_ns: int) -> NicSettings:
    return NicSettings(cc=args.cc, cc_params=parse_params(args.cc_param), reliability=args.reliability,
                       loss_detection=args.loss_detection, reorder_window_rtt=args.reorder_window_rtt,
                       mtu=args.mtu, dscp=args.dscp, priority=args.priority, base_rtt_ns=base_rtt_ns)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rnic", description="RoCEv2 RNIC model: live NIC, simulator, statistics.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = sub.add_parser("serve", help="run a live NIC on an interface with the management API",
                           description="Run a live NIC on IFACE; manage it over the Unix socket MGMT.")
    serve.add_argument("--iface", required=True, help="network interface (e.g. h1-eth0)")
    serve.add_argument("--ip", required=True, help="the NIC's IPv4 address")
    serve.add_argument("--mac", required=True, help="the NIC's MAC address")
    serve.add_argument("--gateway-mac", help="send every frame to this MAC (the first-hop switch)")
    serve.add_argument("--mgmt", required=True, help="Unix socket path of the management API")
    serve.add_argument("--mgmt-tcp", type=int, help="also serve the API on 127.0.0.1:PORT")
    serve.add_argument("--time-dilation", type=float, default=1.0, metavar="D",
                       help="fabric time = wall time / D (default 1)")
    serve.add_argument("--base-rtt", type=int, default=10_000, metavar="NS",
                       help="fabric base RTT in ns (HPCC/TIMELY reference, FCT ideal)")
    add_transport_args(serve)


    for name, text in (("stats", "print a serving NIC's statistics"), ("status", "print a serving NIC's status")):
        q = sub.add_parser(name, help=text, description=text.capitalize() + ".")
        q.add_argument("--mgmt", required=True, help="Unix socket path of the NIC's management API")
        q.add_argument("--json", action="store_true", help="print the raw JSON")
        if name == "stats":
            q.add_argument("--hw", action="store_true",
                           help="the counters under RDMA NICs' names (np_cnp_sent, rx_prio3_pause, ...; "
                                "nicmodel/hw_counters.py), one per line as ethtool -S prints them")

    wl = sub.add_parser("workload", help="start a workload on a serving NIC",
                        description="Start a workload on the NIC serving MGMT (same spec on every host, "
                                    "each with its own rank; see nicmodel/mgmt.py). Prints the NIC's answer, "
                                    "or with --wait the progress (stderr) and the final status as JSON. "
                                    "Exit 0: started, or (--wait) done without errors and the received data "
                                    "as expected (data_ok true, or null where nothing is received); 1: "
                                    "workload errors, data still wrong or not done at the timeout, or a "
                                    "refusal by the NIC (e.g. one already running); 2: bad arguments or spec.")
    wl.add_argument("--mgmt", required=True, help="Unix socket path of the NIC's management API")
    wl.add_argument("--spec", required=True, metavar="FILE|JSON",
                    help="the workload spec: a JSON object, or a file holding one")
    wl.add_argument("--wait", action="store_true", help="poll the workload until it is done")
    wl.add_argument("--timeout", type=parse_seconds, metavar="S",
                    help=f"--wait: give up after S seconds of wall time (default {WAIT_TIMEOUT_S:g})")
    return parser


WAIT_TIMEOUT_S = 300.0
POLL_INTERVAL_S = 0.1


def parse_seconds(text: str) -> float:
    """``--timeout 30`` -> 30.0 (positive, finite)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad timeout {text!r} (seconds, e.g. 30)") from None
    if not value > 0 or not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"timeout {text!r} must be a positive number of seconds")
    return value


def load_spec(text: str) -> dict[str, Any]:
    """``--spec``: inline JSON (starts with ``{``) or the path of a JSON file -> the spec
    object. Checked here only for being a JSON object; the NIC validates its fields."""
    source = "--spec"
    if not text.lstrip().startswith("{"):
        path = Path(text)
        if not path.is_file():
            raise ValueError(f"--spec {text!r}: no such file (give a JSON object or a file holding one)")
        source, text = f"--spec file {text}", path.read_text()
    try:
        spec = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source}: not valid JSON: {exc}") from None
    if not isinstance(spec, dict):
        raise ValueError(f"{source}: the workload spec must be a JSON object")
    return spec


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "serve":
            return _serve(args)
        if args.command == "workload":
            if args.timeout is not None and not args.wait:
                raise argparse.ArgumentTypeError("--timeout needs --wait")
            return _workload(args, load_spec(args.spec))
        return _query(args)
    except argparse.ArgumentTypeError as exc:
        parser.error(str(exc))
    except (ValueError, FileNotFoundError, OSError) as exc:
        print(f"rnic: error: {exc}", file=sys.stderr)
        return 2
    return 0


def _serve(args: argparse.Namespace) -> int:
    settings = transport_settings(args, args.base_rtt)
    port = PacketSocketPort(args.iface)
    try:
        live = LiveNic(port, args.ip, args.mac, line_rate_bps=args.line_rate,
                       time_dilation=args.time_dilation, gateway_mac=args.gateway_mac, settings=settings)
    except Exception:
        port.close()
        raise
    try:
        server = MgmtServer(live, args.mgmt, tcp_port=args.mgmt_tcp)
    except Exception:
        live.close()
        raise
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    live.start()
    server.start()
    print(f"rnic: serving {args.ip} on {args.iface}, management at {args.mgmt}", flush=True)
    try:
        done.wait()
    finally:
        server.close()
        live.close()
    return 0


def format_summary(summary: dict[str, Any], fabric: dict[str, Any] | None = None) -> str:
    """A human-readable table of a stats summary."""
    def us(v: float | None) -> str:
        return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v / 1000:.1f} us"

    def num(v: float | None) -> str:
        return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.2f}"

    fct, slow, c = summary["fct_ns"], summary["slowdown"], summary["counters"]
    lines = [
        f"messages        {summary['completed']}/{summary['messages']} completed, {summary['bytes']} bytes",
        f"elapsed         {us(summary['elapsed_ns'])} (fabric time)",
        f"goodput         {summary['goodput_bps'] / 1e9:.2f} Gb/s",
        f"FCT             mean {us(fct['mean'])}  p50 {us(fct['p50'])}  p99 {us(fct['p99'])}  max {us(fct['max'])}",
        f"slowdown        mean {num(slow['mean'])}  p50 {num(slow['p50'])}  p99 {num(slow['p99'])}",
        f"retransmitted   {c.get('retransmitted_pkts', 0)} packets, {c.get('timeouts', 0)} timeouts",
        f"NAKs / CNPs     {c.get('naks_received', 0)} / {c.get('cnps_received', 0)}",
        f"pauses          {c.get('pause_frames_received', 0)} frames, {us(c.get('pause_ns', 0))} paused",
        f"reassembly peak {c.get('reassembly_peak_bytes', 0)} bytes",
    ]
    if fabric and "switch_ports" in fabric:
        peak = max(p["queue_peak_bytes"] for p in fabric["switch_ports"].values())
        marks = sum(p["ecn_marked"] for p in fabric["switch_ports"].values())
        lines.append(f"switch          queue peak {peak} bytes, {marks} CE marks, {fabric['switch_drops']} drops")
    return "\n".join(lines)


def _connect(path: str) -> NicClient:
    """A client of the NIC serving ``path``; an error that names the socket if none does."""
    try:
        return NicClient(path)
    except OSError as exc:
        raise OSError(f"no NIC management API at {path}: {exc.strerror or exc}") from None


def _query(args: argparse.Namespace) -> int:
    try:
        with _connect(args.mgmt) as client:
            if getattr(args, "hw", False):
                print(format_hw(client.status()["counters"]))
                return 0
            result = client.stats() if args.command == "stats" else client.status()
    except MgmtError as exc:
        print(f"rnic: error: {exc.code}: {exc.message}", file=sys.stderr)
        return 1
    if args.json or args.command == "status":
        print(json.dumps(result, indent=1, sort_keys=True))
    else:
        print(format_summary(result["summary"]))
    return 0


def _workload(args: argparse.Namespace, spec: dict[str, Any]) -> int:
    with _connect(args.mgmt) as client:
        try:
            started = client.start_workload(spec)
        except MgmtError as exc:
            print(f"rnic: error: {exc.code}: {exc.message}", file=sys.stderr)
            return 2 if exc.code == "invalid_params" else 1  # a bad spec vs. e.g. one already running
        if not args.wait:
            print(json.dumps(started, sort_keys=True))
            return 0
        status = _follow(client, args.timeout or WAIT_TIMEOUT_S)
    print(json.dumps(status, indent=1, sort_keys=True))
    if status["errors"]:
        print(f"rnic: workload failed: {status['errors']}", file=sys.stderr)
        return 1
    if not status["done"] or status.get("data_ok") is False:
        what = "not done" if not status["done"] else "received data not as expected"
        print(f"rnic: error: {what} after {args.timeout or WAIT_TIMEOUT_S:g} s "
              f"(progress {status['progress']:.0%}); the workload stays on the NIC", file=sys.stderr)
        return 1
    return 0


def _follow(client: NicClient, timeout_s: float) -> dict[str, Any]:
    """Poll ``workload_status`` until it is finished or ``timeout_s`` (wall) passes; print
    each change of progress on stderr so stdout holds only the final status.

    Finished = done with errors, or done with data that is not wrong. A rank that is only
    the target of RDMA WRITEs (the p2p destination, the incast sink) gets no completions,
    so the NIC reports it done at once; its data is still arriving while ``data_ok`` reads
    False, hence such a rank is followed until its data matches (or the timeout)."""
    deadline = time.monotonic() + timeout_s
    shown = None
    while True:
        status = client.workload_status()
        if status["progress"] != shown:
            shown = status["progress"]
            print(f"rnic: {status['kind']} rank {status.get('rank')}: {shown:.0%}", file=sys.stderr, flush=True)
        finished = status["done"] and (status["errors"] or status.get("data_ok") is not False)
        if finished or time.monotonic() >= deadline:
            return status
        time.sleep(POLL_INTERVAL_S)


if __name__ == "__main__":
    sys.exit(main())
