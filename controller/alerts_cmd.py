"""``fabricctl alerts [--follow]`` and the alert thresholds of ``fabricctl telemetry``.

The live fabric's alerts are logged next to its state file (``alerts.jsonl``) by whatever
samples its telemetry (``fabricctl telemetry``); ``alerts`` lists the log, one line per alert,
and ``--follow`` prints each alert as it opens or closes.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from controller.alerts import AlertMonitor, AlertSettings, format_record, read_log

FOLLOW_POLL_S = 0.5


def log_path(state_path: Path) -> Path:
    return state_path.parent / "alerts.jsonl"


def add_threshold_args(sp: argparse.ArgumentParser) -> None:
    d = AlertSettings()
    sp.add_argument("--pause-per-s", type=float, default=d.pause_per_s,
                    help=f"microburst alert above this many PFC pauses/s on a port (default {d.pause_per_s:g})")
    sp.add_argument("--ecn-rate", type=float, default=d.ecn_rate,
                    help=f"congestion alert above this ECN-marked share of a port's packets (default {d.ecn_rate:g})")
    sp.add_argument("--discards", type=int, default=d.discards,
                    help=f"discard alarm above this many receive discards per sample (default {d.discards})")


def monitor_for(args: argparse.Namespace, ctl, state_path: Path) -> AlertMonitor:
    """The telemetry's alert monitor with the thresholds given, logging for ``fabricctl alerts``
    and printing each change."""

    def show(what: str, alert) -> None:
        print(f"ALERT {what}: {alert.describe()}", flush=True)

    return AlertMonitor(ctl.topo, AlertSettings(args.pause_per_s, args.ecn_rate, args.discards),
                        data_prio=ctl.settings.classes.data_priority, log=log_path(state_path), on_change=show)


def add_parser(sub) -> None:
    sp = sub.add_parser("alerts", help="alerts against the counter baselines (microburst, congestion, discards)",
                        description="List the alerts the fabric's telemetry raised (its alerts.jsonl), with where, "
                                    "when they started and ended; --follow streams new ones.")
    sp.add_argument("--log", type=Path, default=None, help="alerts log (default: alerts.jsonl beside the state file)")
    sp.add_argument("--follow", action="store_true", help="keep printing alerts as they open and close")
    sp.add_argument("--json", action="store_true", help="one JSON object per alert")


def cmd_alerts(args: argparse.Namespace, state_path: Path) -> int:
    path = args.log or log_path(state_path)
    for rec in read_log(path):
        print(json.dumps(rec) if args.json else format_record(rec), flush=True)
    if not args.follow:
        return 0
    offset = path.stat().st_size if path.exists() else 0
    while True:
        time.sleep(FOLLOW_POLL_S)  # a file has no change notification we can rely on everywhere
        if not path.exists() or path.stat().st_size <= offset:
            continue
        with open(path) as f:
            f.seek(offset)
            chunk = f.read()
        complete = chunk[: chunk.rfind("\n") + 1]
        offset += len(complete.encode())
        for line in complete.splitlines():
            rec = json.loads(line)
            print(json.dumps(rec) if args.json else f"{rec['event']:<5} {format_record(rec)}", flush=True)
