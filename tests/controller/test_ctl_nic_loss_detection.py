"""The NICs' loss detection is a fabric setting: the ai-fabric profile (spraying) gives them
time-based loss detection with a reorder window wide enough for sprayed paths, the controller
passes it through the NIC management API, and bad values are refused before anything changes."""

from __future__ import annotations

import pytest

from controller.fabric_rules import configure_nic
from controller.profiles import settings_for
from controller.settings import Settings, SettingsError
from nicmodel import LossDetection
from nicmodel.settings import NicSettings
from topo.builder import leaf_spine


class RecordingNic:
    """Stands in for nicmodel.mgmt.NicClient: applies ``configure`` the way a live NIC does
    (the parameters must be NicSettings fields and validate)."""

    def __init__(self) -> None:
        self.settings = NicSettings()

    def configure(self, **params):
        settings = NicSettings(**{**self.settings.as_dict(), **params})
        settings.validate(100e9)
        self.settings = settings
        return {"config": settings.as_dict()}


def test_ai_fabric_nics_get_a_wide_time_based_reorder_window():
    nic = RecordingNic()
    topo = leaf_spine()
    configure_nic(nic, topo, "h1_1", settings_for("ai-fabric"))
    qp = nic.settings.qp_config()
    assert nic.settings.reliability == "sr"
    assert qp.loss_detection is LossDetection.RACK
    assert qp.reorder_window_rtt == 4.0
    configure_nic(nic, topo, "h1_1", settings_for("baseline"))
    assert nic.settings.reliability == "gbn"
    assert nic.settings.reorder_window_rtt == Settings().nic.reorder_window_rtt


def test_classic_count_mode_can_be_chosen_and_bad_values_are_refused():
    s = settings_for("ai-fabric", {"nic": {"loss_detection": "count"}})
    nic = RecordingNic()
    configure_nic(nic, leaf_spine(), "h1_1", s)
    assert nic.settings.qp_config().loss_detection is LossDetection.COUNT
    with pytest.raises(SettingsError, match="nic.loss_detection"):
        settings_for("ai-fabric", {"nic": {"loss_detection": "fast"}})
    with pytest.raises(SettingsError, match="nic.reorder_window_rtt"):
        settings_for("ai-fabric", {"nic": {"reorder_window_rtt": 0}})
