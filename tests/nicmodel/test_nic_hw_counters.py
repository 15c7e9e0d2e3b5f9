"""The NIC's counters under RDMA NICs' names: each one moves when its event happens."""

from __future__ import annotations

from netbase import pfc
from nicmodel.hw_counters import HW_NAMES, hw_counters
from nicmodel.nic import Nic
from nicmodel.workloads import nic_counters


def test_pause_frames_show_per_priority_and_in_total() -> None:
    nic = Nic("02:00:00:00:00:01", "10.0.1.1", 100e9)
    peer = bytes.fromhex("020000000099")
    nic.receive(pfc.build(peer, {3: 0xFFFF}), 0)
    nic.receive(pfc.build(peer, {3: 0, 6: 100}), 1_000)
    nic.receive(b"\x00" * 20, 2_000)  # a runt: dropped before any QP
    hw = hw_counters(nic_counters(nic, 10_000))
    assert hw["rx_pause_ctrl_phy"] == 2
    assert hw["rx_prio3_pause"] == 2 and hw["rx_prio6_pause"] == 1 and hw["rx_prio0_pause"] == 0
    assert hw["rx_prio3_pause_duration"] == 1  # resumed after 1 us
    assert hw["rx_discards_phy"] == 1 and hw["rx_packets_phy"] == 3
    assert hw["tx_prio3_pause"] == 0  # the NIC never sends PFC


def test_every_mapped_counter_exists_in_the_model() -> None:
    nic = Nic("02:00:00:00:00:01", "10.0.1.1", 100e9)
    model = nic_counters(nic, 0)
    assert set(HW_NAMES.values()) <= set(model)
