"""Calibration of the live fabric's time dilation: the cost model and the choice of D."""

from __future__ import annotations

import pytest

from controller.calibrate import (
    HOPS,
    SHARE,
    calibrate,
    choose_dilation,
    cpu_per_fabric_second,
    data_frame_bytes,
    full_load_pps,
    nic_packet_rate,
    roce_sized_frame,
)
from lab.targets import Compiled


def test_full_load_is_every_host_at_line_rate_in_full_frames() -> None:
    assert data_frame_bytes(1024) == 14 + 20 + 8 + 12 + 16 + 1024 + 4
    assert len(roce_sized_frame(1024)) == data_frame_bytes(1024)
    assert full_load_pps([100e9] * 4, 1024) == pytest.approx(4 * 100e9 / (8 * data_frame_bytes(1024)))


def test_cpu_need_counts_every_switch_hop_and_both_nic_ends_for_data_and_acks() -> None:
    # 1000 data pkt/s, 1000 ACKs: 2000 packets, each 3 switch hops at 1000/s and one NIC pass at 2000/s
    assert cpu_per_fabric_second(1000, switch_pps=1000, nic_pps=2000) == pytest.approx(2000 * (HOPS / 1000 + 1 / 2000))
    with pytest.raises(ValueError, match="no packets"):
        cpu_per_fabric_second(1000, switch_pps=0, nic_pps=2000)


def test_dilation_fits_the_share_of_the_cores_rounded_up() -> None:
    # 10,000 CPU seconds per fabric second on 2 cores at a 50 % share: D = 10,000
    assert choose_dilation(10_000, cores=2, share=0.5) == 10_000
    assert choose_dilation(12_345, cores=2, share=0.5) == 13_000  # two significant digits, upwards
    assert choose_dilation(12_345, cores=4, share=0.5) == 6_200  # twice the cores, half the slow-down
    assert choose_dilation(0.1, cores=2) == 1.0  # never faster than real time


def test_a_slower_machine_gets_a_larger_dilation() -> None:
    """The point of calibrating: halving what the switch sustains (a busy machine) about doubles D."""
    rates = [100e9] * 4
    fast = calibrate("ours", Compiled(None, None), rates, 1024, switch_pps=20_000)  # type: ignore[arg-type]
    slow = calibrate("ours", Compiled(None, None), rates, 1024, switch_pps=10_000)  # type: ignore[arg-type]
    assert slow.dilation > 1.6 * fast.dilation
    assert fast.needed_cpu / (SHARE * fast.cores) <= fast.dilation  # the chosen D keeps the budget
    assert "D = " in fast.describe()


def test_nic_packet_rate_measures_a_working_transport() -> None:
    assert nic_packet_rate(1024, seconds=0.05) > 100  # packets flowed and were counted
