"""The fabric monitor's queue drops: what each switch's ``queue_stats`` counted since the poll
before, from the first poll on (not what it counted before the caller looked), and all of a
restarted switch's counts."""

from __future__ import annotations

from types import SimpleNamespace

from controller.oper_status import FabricMonitor, parse_queue_drops

HEADER = "port queue depth capacity rate_pps enqueued dequeued drop_full drop_watchdog max_depth"


def _queue_stats(full: int, watchdog: int) -> str:
    # two queues of port 1 share the drops; the per-port summary line is not a queue
    return "\n".join([HEADER, f"1 0 0 128 unlimited 9 9 {full - 1} 0 3", f"1 3 0 128 unlimited 9 9 1 {watchdog} 128",
                      "1 port_rate_bps=unlimited tx_frames=9 tx_bytes=900", "dropped_bad_priority=0"])


def test_parse_queue_drops_sums_a_switchs_queues() -> None:
    assert parse_queue_drops(_queue_stats(5, 7)) == (5, 7)


def test_drops_are_counted_from_the_first_poll_and_after_a_restart() -> None:
    counts = [(10, 4), (13, 4), (13, 9), (2, 1)]  # the last after the switch restarted
    polls = iter(counts)
    current: dict[str, tuple[int, int]] = {}

    def run(line: str) -> str:
        if line == "queue_stats":
            return _queue_stats(*current["now"])
        return {"show_ports": "port | iface | status\n1 | sw-eth1 | UP", "pfc_stats": "port class ..."}[line]

    ctl = SimpleNamespace(conns={}, topo=SimpleNamespace(ports_of=lambda name: {1: None}))
    clock = iter(range(100))
    monitor = FabricMonitor(ctl, {"sw": run}, fabric_us=lambda: float(next(clock)))
    for _ in counts:
        current["now"] = next(polls)
        monitor.poll()
    assert [(full, wd) for _, full, wd in monitor.drops] == [(0, 0), (3, 0), (0, 5), (2, 1)]


def test_a_target_without_queue_stats_adds_nothing() -> None:
    def run(line: str) -> str:
        if line == "queue_stats":
            raise RuntimeError("Invalid command")  # the reference switch's CLI
        return {"show_ports": "port | iface | status\n1 | sw-eth1 | UP", "pfc_stats": ""}[line]

    ctl = SimpleNamespace(conns={}, topo=SimpleNamespace(ports_of=lambda name: {1: None}))
    monitor = FabricMonitor(ctl, {"sw": run}, fabric_us=lambda: 1.0)
    monitor.poll()
    assert monitor.drops == [(1.0, 0, 0)]
