"""The ``p4_device_config`` bytes of our target: the preprocessed P4 source, as JSON.

A P4Runtime ``ForwardingPipelineConfig`` carries a target-specific blob (BMv2 takes its JSON).
Ours carries the program text after preprocessing, so the switch re-runs the front end and
executor on exactly what the compiler saw, with no include paths needed on the switch side::

    {"target": "p4switch", "version": 1, "name": "<file>.p4", "source": "<preprocessed text>"}
"""

from __future__ import annotations

import json
from dataclasses import dataclass

TARGET = "p4switch"
VERSION = 1


@dataclass(frozen=True)
class DeviceConfig:
    name: str
    source: str


def encode(name: str, source: str) -> bytes:
    return json.dumps({"target": TARGET, "version": VERSION, "name": name, "source": source},
                      indent=1).encode()


def decode(data: bytes) -> DeviceConfig:
    """Raises ValueError saying what is wrong (e.g. a BMv2 JSON pushed to our target)."""
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"device config is not p4switch JSON: {e}") from None
    if not isinstance(obj, dict):
        raise ValueError("device config must be a JSON object")
    if obj.get("target") != TARGET:
        hint = " (this looks like a BMv2 JSON; compile with p4switch-compile)" if "pipelines" in obj else ""
        raise ValueError(f"device config target is {obj.get('target')!r}, expected {TARGET!r}{hint}")
    if obj.get("version") != VERSION:
        raise ValueError(f"device config version {obj.get('version')!r} is not supported (expected {VERSION})")
    name, source = obj.get("name"), obj.get("source")
    if not isinstance(name, str) or not isinstance(source, str):
        raise ValueError("device config needs string fields 'name' and 'source'")
    return DeviceConfig(name, source)
