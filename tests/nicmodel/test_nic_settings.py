"""The one NIC settings schema: every way in (management API, rnic CLI, controller) refuses
the same values with a message naming the setting, and the algorithm list is nicmodel.cc's."""

from __future__ import annotations

import pytest

from controller.settings import Settings, SettingsError
from nicmodel.cc import ALGORITHMS
from nicmodel.cli import build_parser
from nicmodel.settings import CC_ALGORITHMS, NicSettings
from nicmodel.settings import SettingsError as NicSettingsError


def test_defaults_are_valid_and_every_setting_is_described() -> None:
    NicSettings().validate()
    described = {name for name, _, _ in NicSettings.describe()}
    assert described == set(NicSettings().as_dict())
    assert dict((n, rule) for n, rule, _ in NicSettings.describe())["dscp"] == "0..63"


@pytest.mark.parametrize("values, message", [
    ({"cc": "bbr"}, "cc: 'bbr' is not one of none, dcqcn, hpcc, timely"),
    ({"reliability": "sack"}, "reliability: 'sack' is not one of gbn, sr"),
    ({"loss_detection": "fast"}, "loss_detection: 'fast' is not one of"),
    ({"reorder_window_rtt": 0}, r"reorder_window_rtt: 0 is outside \(0..16\)"),
    ({"mtu": 1500}, "mtu: 1500 is not one of 256, 512, 1024, 2048, 4096"),
    ({"dscp": 64}, "dscp: 64 is outside 0..63"),
    ({"priority": 2.5}, r"priority: 2.5 is outside 0..7"),
    ({"ecn": "yes"}, "ecn: expected true or false"),
    ({"base_rtt_ns": 0}, "base_rtt_ns: 0 is outside"),
    ({"cc_params": {"eta": "high"}}, "cc_params must map parameter names to numbers"),
    ({"cc": "hpcc", "cc_params": {"eta": 1.5}}, "cc_params: hpcc eta must be in"),
    ({"speed": 1}, r"unknown setting\(s\) \['speed'\]"),
])
def test_bad_values_are_refused_naming_the_setting(values, message) -> None:
    base = NicSettings(cc="dcqcn")
    with pytest.raises(NicSettingsError, match=message):
        NicSettings.from_dict(values, base)
    assert base == NicSettings(cc="dcqcn")  # nothing changed


def test_the_algorithm_list_is_the_registry_everywhere() -> None:
    assert CC_ALGORITHMS == tuple(ALGORITHMS)
    rnic_cc = next(a for a in build_parser()._subparsers._group_actions[0].choices["serve"]._actions
                   if a.dest == "cc")
    assert sorted(rnic_cc.choices) == sorted(ALGORITHMS)
    for name in ALGORITHMS:
        assert Settings().with_overrides({"nic": {"cc": name}}).nic.cc == name
    with pytest.raises(SettingsError, match="nic.cc: 'bbr' is not one of"):
        Settings().with_overrides({"nic": {"cc": "bbr"}})


def test_the_controller_section_is_checked_by_the_nic_schema() -> None:
    with pytest.raises(SettingsError, match=r"nic.reorder_window_rtt: 20.0 is outside \(0..16\)"):
        Settings().with_overrides({"nic": {"reorder_window_rtt": 20.0}})
