"""The switch's I/O loop records how late it served each due event against the fabric clock,
and ``switch_stats`` shows it (``sched_lag.*``)."""

from __future__ import annotations

from netbase.lag import SchedulingLag
from p4switch.switch.commands import Commands
from p4switch.switch.device import Device
from p4switch.switch.loop import SwitchLoop


class SteppedClock:
    def __init__(self) -> None:
        self.t = 0

    def now_ns(self) -> int:
        return self.t

    def wall_seconds(self, fabric_ns: int) -> float:
        return 0.0  # never sleep: the test moves time


class BusyDevice:
    """Asks to be polled again at 1000 ns, then is busy until 1700 ns (700 ns late)."""

    def __init__(self) -> None:
        self.clock = SteppedClock()
        self.sched_lag = SchedulingLag()
        self.notify = None
        self.polls = 0
        self.loop: SwitchLoop | None = None

    def poll(self) -> int | None:
        self.polls += 1
        if self.polls == 1:
            self.clock.t = 1700  # what the next event waits behind
            return 1000
        assert self.loop is not None
        self.loop.stop_event.set()
        return None


def test_loop_records_how_late_a_due_event_was_served() -> None:
    device = BusyDevice()
    loop = SwitchLoop(device, {})  # type: ignore[arg-type]
    device.loop = loop
    loop.run()
    assert device.sched_lag.timers == 1
    assert device.sched_lag.max_ns == 700


def test_switch_stats_show_the_scheduling_lag() -> None:
    device = Device()
    device.sched_lag.record(0, 700)
    stats = dict(line.split("=") for line in Commands(device).run("switch_stats").splitlines())
    assert stats["sched_lag.timers"] == "1"
    assert stats["sched_lag.max_ns"] == "700"
    assert SchedulingLag.from_fields(stats).max_ns == 700
