"""The named fabric profiles: each is a set of overrides of the defaults in ``settings``.

This dictionary is the only place a profile is defined; ``fabricctl profile NAME``, the demo
and the README's table all read it.
"""

from __future__ import annotations

from typing import Any

from controller.settings import Settings, SettingsError
from nicmodel.cc.dcqcn import TABLE_PARAMS as DCQCN_TABLE

PROFILES: dict[str, dict[str, Any]] = {
    # What most RoCEv2 fabrics run today: hash-based ECMP (a flow stays on one path), lossless
    # class with PFC, ECN marking feeding DCQCN, and Go-Back-N retransmission in the NICs.
    "baseline": {
        "description": "ECMP, Go-Back-N, DCQCN, PFC on",
        "lb": {"data_mode": "ecmp", "control_mode": "ecmp"},
        "ecn": {"enabled": True},
        "pfc": {"enabled": True, "xoff_bytes": 40_000, "xon_bytes": 20_000},
        "int": {"enabled": True, "sink_mode": "report"},
        "nic": {"cc": "dcqcn", "reliability": "gbn"},
    },
    # The AI-fabric design: spray each data packet over all uplinks (NICs reassemble out of
    # order with selective repeat), HPCC rate control from INT echoed per hop (the leaves also
    # report that INT to the controller, for telemetry), PFC kept only as a safety net (higher
    # XOFF so it rarely fires).
    # Spraying reorders every flow by the delay spread between paths; the NICs judge a hole lost
    # by time (RACK), and tolerate 4 minimum RTTs of reordering before resending: a PFC pause
    # holds one spine's packets while the other spine keeps delivering, and the live fabric's
    # time-dilated switch processes add scheduling jitter of several fabric microseconds. The
    # lossless class rarely loses a packet, and a real loss is still resent after ~5 RTTs, two
    # orders of magnitude before the retransmission timeout (500 us).
    "ai-fabric": {
        "description": "per-packet spraying, selective repeat + OOO reassembly, HPCC, PFC as safety net",
        "lb": {"data_mode": "spray", "spray_algo": "best_of_two", "control_mode": "ecmp"},
        "ecn": {"enabled": True},
        "pfc": {"enabled": True, "xoff_bytes": 80_000, "xon_bytes": 40_000},
        "int": {"enabled": True, "sink_mode": "echo+report"},
        "nic": {"cc": "hpcc", "reliability": "sr", "loss_detection": "rack", "reorder_window_rtt": 4.0},
    },
    # The other AI-fabric load balancer: flowlet switching (DLB) moves a flow to the least
    # loaded uplink only after a pause longer than the flowlet timeout, so packets rarely
    # reorder; NICs as in ai-fabric.
    "ai-dlb": {
        "description": "DLB flowlets (100 us), selective repeat, HPCC, PFC as safety net",
        "lb": {"data_mode": "dlb", "flowlet_timeout_us": 100, "control_mode": "ecmp"},
        "ecn": {"enabled": True},
        "pfc": {"enabled": True, "xoff_bytes": 80_000, "xon_bytes": 40_000},
        "int": {"enabled": True, "sink_mode": "echo+report"},
        "nic": {"cc": "hpcc", "reliability": "sr"},
    },
    # DCQCN with the deployment table's parameters instead of the DCQCN paper's defaults:
    # ECN Kmin 100 KB, Kmax 200 KB, Pmax 0.5 at the switch, and the table's NIC values
    # (byte counter 150 KB, T 55 us, F 5, R_AI 40 Mb/s; nicmodel/cc/dcqcn.py TABLE_PARAMS).
    "dcqcn-table": {
        "description": "as baseline, DCQCN with the deployment table's ECN and NIC parameters",
        "lb": {"data_mode": "ecmp", "control_mode": "ecmp"},
        "ecn": {"enabled": True, "kmin_bytes": 100_000, "kmax_bytes": 200_000, "pmax": 0.5},
        "pfc": {"enabled": True, "xoff_bytes": 40_000, "xon_bytes": 20_000},
        "int": {"enabled": True, "sink_mode": "report"},
        "nic": {"cc": "dcqcn", "reliability": "gbn", "cc_params": dict(DCQCN_TABLE)},
    },
}


def profile_names() -> list[str]:
    return list(PROFILES)


def description(name: str) -> str:
    return PROFILES[name]["description"]


def settings_for(name: str, overrides: dict[str, dict[str, Any]] | None = None) -> Settings:
    """Defaults, then the profile, then the operator's ``set`` overrides; validated."""
    if name not in PROFILES:
        raise SettingsError(f"unknown profile {name!r} (profiles: {', '.join(PROFILES)})")
    prof = {k: v for k, v in PROFILES[name].items() if k != "description"}
    return Settings().with_overrides(prof).with_overrides(overrides or {})
