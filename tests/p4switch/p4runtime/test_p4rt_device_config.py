"""The device config round-trips and bad ones are refused with a clear message."""

import json

import pytest

from p4switch.p4info import device_config


def test_round_trip_keeps_source_bytes():
    src = '# 1 "prog.p4"\nheader h_t { bit<8> f; }\n/* é */\n'
    cfg = device_config.decode(device_config.encode("prog.p4", src))
    assert cfg == device_config.DeviceConfig("prog.p4", src)
    assert json.loads(device_config.encode("prog.p4", src))["target"] == "p4switch"


@pytest.mark.parametrize("data, message", [
    (b"\xff\xfe", "not p4switch JSON"),
    (b"[1, 2]", "JSON object"),
    (json.dumps({"pipelines": [], "header_types": []}).encode(), "BMv2 JSON"),
    (json.dumps({"target": "p4switch", "version": 2, "name": "x", "source": ""}).encode(), "version 2"),
    (json.dumps({"target": "p4switch", "version": 1, "name": "x"}).encode(), "'source'"),
])
def test_bad_configs(data, message):
    with pytest.raises(ValueError, match=message):
        device_config.decode(data)
