"""A point's params: the experiment's own knobs apart, dotted keys become the controller's
settings (what `fabricctl sweep --grid` varies), checked by the same validator as `fabricctl set`."""

from __future__ import annotations

import pytest

from controller.settings import SettingsError
from experiments import sim
from experiments.base import Point


def test_dotted_params_become_settings_overrides() -> None:
    own, over = sim.split_params({"lb": "ecmp", "ecn.kmin_bytes": 5000, "cc.algo": "hpcc", "cc.eta": 0.9,
                                  "pfc.enabled": False})
    assert own == {"lb": "ecmp"}
    assert over == {"ecn": {"kmin_bytes": 5000}, "pfc": {"enabled": False}, "nic": {"cc": "hpcc", "cc_params": {"eta": 0.9}}}
    s = sim.settings("ai-fabric", over)
    assert (s.ecn.kmin_bytes, s.pfc.enabled, s.nic.cc, s.nic.cc_params) == (5000, False, "hpcc", {"eta": 0.9})


def test_a_cc_parameter_keeps_the_profiles_other_parameters() -> None:
    base = sim.settings("dcqcn-table", {}).nic.cc_params
    s = sim.settings("dcqcn-table", sim.split_params({"cc.rate_ai_bps": 80e6})[1])
    assert s.nic.cc_params == {**base, "rate_ai_bps": 80e6} and len(base) > 1


def test_bad_overrides_are_refused_naming_the_setting() -> None:
    with pytest.raises(SettingsError, match="ecn.kmin_bytes"):
        sim.settings("baseline", sim.split_params({"ecn.kmin_bytes": 10**6, "ecn.kmax_bytes": 10})[1])


def test_extensions_are_reported_for_selective_repeat_and_hpcc_only() -> None:
    assert sim.uses_extensions(sim.settings("ai-fabric", {}))
    assert not sim.uses_extensions(sim.settings("baseline", {}))
    assert not sim.uses_extensions(sim.settings("ai-fabric", {}), {"roce_extensions": False})


def test_point_keys_are_stable_and_round_trip() -> None:
    p = Point("incast", {"pfc": True, "n": 8, "cc": "none"}, seed=2, quick=False)
    assert p.key() == "incast[cc=none,n=8,pfc=True]seed=2"
    assert Point.from_dict(p.to_dict()) == p
