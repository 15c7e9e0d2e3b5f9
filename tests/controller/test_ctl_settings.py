"""Settings validation, profiles and the `set` argument grammar."""

from __future__ import annotations

import pytest

from controller.cli import UsageError, parse_set
from controller.profiles import PROFILES, settings_for
from controller.settings import PFC_STALE_MIN_US, Settings, SettingsError, parse_value


def test_profiles_are_what_the_readme_says():
    base = settings_for("baseline")
    assert (base.lb.data_mode, base.nic.reliability, base.nic.cc, base.pfc.enabled) == ("ecmp", "gbn", "dcqcn", True)
    ai = settings_for("ai-fabric")
    assert ai.lb.data_mode in ("spray", "dlb")
    assert (ai.nic.reliability, ai.nic.cc, ai.pfc.enabled) == ("sr", "hpcc", True)
    assert ai.pfc.xoff_bytes > base.pfc.xoff_bytes  # PFC only as a safety net
    assert set(PROFILES) >= {"baseline", "ai-fabric"}


def test_overrides_apply_on_top_of_profile_without_mutating():
    s = settings_for("ai-fabric", {"ecn": {"kmin_bytes": 1000, "pmax": 1}, "nic": {"cc_params": {"eta": 0.9}}})
    assert (s.ecn.kmin_bytes, s.ecn.pmax, s.nic.cc_params) == (1000, 1.0, {"eta": 0.9})
    assert Settings().ecn.kmin_bytes == 5000


@pytest.mark.parametrize("overrides, message", [
    ({"ecn": {"kmin_bytes": 50_000, "kmax_bytes": 10_000}}, "must not exceed"),
    ({"ecn": {"pmax": 1.5}}, "ecn.pmax: 1.5 is outside"),
    ({"ecn": {"kmin": 1}}, "unknown setting ecn.kmin"),
    ({"qos": {"x": 1}}, "unknown section 'qos'"),
    ({"lb": {"data_mode": "magic"}}, "lb.data_mode: 'magic' is not one of ecmp, dlb, spray"),
    ({"pfc": {"xon_bytes": 50_000, "xoff_bytes": 40_000}}, "must be below"),
    ({"int": {"enabled": "maybe"}}, "expected true or false"),
    ({"nic": {"cc": "bbr"}}, "nic.cc: 'bbr' is not one of"),
    ({"lb": {"flowlet_timeout_us": 0}}, "lb.flowlet_timeout_us: 0 is outside"),
    ({"nic": {"cc_params": {"warp_factor": 9}}}, "nic.cc_params: unknown dcqcn parameter"),
    ({"nic": {"cc": "hpcc", "cc_params": {"eta": 1.5}}}, "nic.cc_params: hpcc eta must be in"),
])
def test_bad_overrides_rejected(overrides, message):
    with pytest.raises(SettingsError, match=message):
        settings_for("baseline", overrides)


def test_unknown_profile():
    with pytest.raises(SettingsError, match="unknown profile 'fast'.*baseline, ai-fabric"):
        settings_for("fast")


def test_set_grammar():
    assert parse_value("on") is True and parse_value("7") == 7 and parse_value("0.5") == 0.5
    assert parse_set("ecn", ["kmin_bytes=100", "pmax=0.1"]) == {"ecn": {"kmin_bytes": 100, "pmax": 0.1}}
    assert parse_set("dlb", ["timeout_us=300"]) == {"lb": {"data_mode": "dlb", "flowlet_timeout_us": 300}}
    assert parse_set("spray", ["algo=random"]) == {"lb": {"data_mode": "spray", "spray_algo": "random"}}
    assert parse_set("cc", ["algo=hpcc", "eta=0.9"]) == {"nic": {"cc": "hpcc", "cc_params": {"eta": 0.9}}}
    with pytest.raises(UsageError, match="expected KEY=VALUE"):
        parse_set("ecn", ["kmin_bytes"])
    with pytest.raises(UsageError, match="at least one"):
        parse_set("ecn", [])


def test_pfc_stale_time_is_a_setting_no_shorter_than_the_watchdog():
    """fabric.p4's PFC stale time comes from pfc.stale_us; shorter than the watchdog's detection
    time it would forget packets a pause legitimately holds, so it is refused."""
    assert Settings().pfc.stale_us == 200_000 == PFC_STALE_MIN_US
    assert settings_for("baseline", {"pfc": {"stale_us": 500_000}}).pfc.stale_us == 500_000
    with pytest.raises(SettingsError, match=r"pfc.stale_us: 1000 is below the PFC watchdog's detection time"):
        settings_for("baseline", {"pfc": {"stale_us": 1000}})
    with pytest.raises(SettingsError, match="pfc.stale_us: expected an integer"):
        settings_for("baseline", {"pfc": {"stale_us": 0.5}})
    with pytest.raises(SettingsError, match="pfc.stale_us: 4294967296 is outside"):
        settings_for("baseline", {"pfc": {"stale_us": 1 << 32}})
