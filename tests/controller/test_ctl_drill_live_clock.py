"""The live drill's table needs the workload's messages on its own clock: each NIC stamps
them with a fabric clock counted from its own process's start."""

from __future__ import annotations

from controller.drills.live import nic_messages


class _Nic:
    """A NIC whose clock started at fabric time ``epoch_us`` of the controller's."""

    def __init__(self, clock: list[float], epoch_us: float, messages: list[dict]) -> None:
        self.clock, self.epoch_us, self.messages = clock, epoch_us, messages

    def status(self) -> dict:
        self.clock[0] += 0.02  # the call takes a little fabric time
        return {"now_ns": round((self.clock[0] - self.epoch_us) * 1e3)}

    def stats(self) -> dict:
        return {"messages": self.messages}


class _Gone:
    def status(self) -> dict:
        raise ConnectionError("NIC restarting")


def test_messages_are_placed_on_the_drills_clock_whichever_nic_stamped_them() -> None:
    clock = [5000.0]  # the controller's fabric microseconds

    def fabric_us() -> float:
        clock[0] += 0.01
        return clock[0]

    nics = {
        "h1": _Nic(clock, 1000.0, [{"size": 4096, "start_ns": 3_500_000, "end_ns": 3_560_000, "ideal_ns": 40_000}]),
        "h2": _Nic(clock, 4000.0, [{"size": 8192, "start_ns": 500_000, "end_ns": None}]),
        "h3": _Gone(),
    }
    got = nic_messages(nics, fabric_us, t0_us=4400.0)
    # h1's 3,500 us is the controller's 4,500 us: 100 us into the drill; h2's 500 us likewise
    assert [(m["size"], round(m["start_us"], 1), m["end_us"] and round(m["end_us"], 1)) for m in got] == [
        (4096, 100.0, 160.0), (8192, 100.0, None)]
    assert got[0]["ideal_us"] == 40.0
