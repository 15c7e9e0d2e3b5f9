"""``lab.forwarding_rate`` on our switch process: what `make bench` and the demo's calibration
measure (frames delivered, packets/s, and the switch's own CPU per frame)."""

from __future__ import annotations

import os

import pytest

from lab.basic_program import BASIC_P4, CPU_PORT, FORWARD, TABLE, udp_frame
from lab.forwarding_rate import forwarding_rate
from lab.targets import compile_program

pytestmark = pytest.mark.net  # a switch process on veths, as root

ROUTES = [(TABLE, {"hdr.ipv4.dstAddr": "10.0.2.0/24"}, FORWARD, {"dstAddr": "00:00:00:00:02:02", "port": 2})]


@pytest.mark.parametrize("batched", [False, True])  # a frame per send (calibration), a window per sendmmsg (bench)
def test_every_frame_arrives_and_the_switch_cpu_is_counted_while_they_flow(tmp_path, batched: bool) -> None:
    compiled = compile_program("ours", BASIC_P4, str(tmp_path))
    frame = bytes(udp_frame("10.0.2.2", payload=b"x" * 64))
    rate = forwarding_rate("ours", compiled, ROUTES, frame, seconds=30, max_frames=3000, window=32,
                           prefix="fr", cpu_port=CPU_PORT, batched=batched)
    assert rate.sent == rate.received == 3000
    assert rate.pps == pytest.approx(3000 / rate.seconds)
    # The switch process used CPU while the frames flowed, and no more than all the cores over that time.
    assert 0 < rate.switch_cpu_s <= rate.seconds * len(os.sched_getaffinity(0)) + 0.05
    assert rate.cpu_us_per_frame == pytest.approx(rate.switch_cpu_s * 1e6 / 3000)
