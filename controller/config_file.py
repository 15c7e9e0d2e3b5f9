"""A fabric configuration file (configuration as code) and its canary rollout.

The file is YAML, versioned by the operator::

    profile: ai-fabric             # a named profile (controller/profiles.py)
    overrides:                     # settings for the whole fabric (controller/settings.py)
      ecn: {kmin_bytes: 10000}
    switches:                      # per switch, on top of the fabric's
      leaf1: {pfc: {xoff_bytes: 60000}}
    nics:                          # per host's NIC (nic, classes, ecn sections)
      h1_1: {nic: {reorder_window_rtt: 2.0}}

Each switch and NIC gets ``settings_for(profile, overrides + its own)``: one validator guards
the whole file before anything is written. Applying writes, per switch, the difference
between what the controller installed and the intent of the switch's new settings; if any
write fails, every switch already written (and the failing one, read back) is written back to
its previous intent, so the fabric is never half-configured. The previous per-node settings
are kept in the fabric's state directory so ``--rollback`` restores them exactly.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from controller import fabric_rules
from controller.intent import Intent, diff
from controller.profiles import settings_for
from controller.settings import Settings, SettingsError
from p4rt.formatting import format_match

log = logging.getLogger(__name__)

TOP_KEYS = ("profile", "overrides", "switches", "nics")
PREVIOUS_FILE = "config-previous.json"


@dataclass
class FabricConfig:
    profile: str
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    switches: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    nics: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

    def settings_of(self, node: str) -> Settings:
        per_node = self.switches.get(node) or self.nics.get(node) or {}
        return settings_for(self.profile, _merge(self.overrides, per_node))


def _merge(base: dict[str, dict[str, Any]], extra: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {k: dict(v) for k, v in base.items()}
    for section, values in extra.items():
        out.setdefault(section, {}).update(values)
    return out


def parse_config(text: str, topo, where: str = "config") -> FabricConfig:
    """The whole file validated against the settings schema and the topology; raises
    SettingsError naming the offending key."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise SettingsError(f"{where}: not valid YAML: {e}") from None
    if not isinstance(doc, dict):
        raise SettingsError(f"{where}: expected a mapping with keys {', '.join(TOP_KEYS)}")
    unknown = [k for k in doc if k not in TOP_KEYS]
    if unknown:
        raise SettingsError(f"{where}: unknown key {unknown[0]!r} (keys: {', '.join(TOP_KEYS)})")
    if not isinstance(doc.get("profile"), str):
        raise SettingsError(f"{where}: profile: expected a profile name")
    cfg = FabricConfig(doc["profile"], doc.get("overrides") or {}, doc.get("switches") or {}, doc.get("nics") or {})
    try:
        settings_for(cfg.profile, cfg.overrides)
    except SettingsError as e:
        raise SettingsError(f"{where}: overrides: {e}") from None
    for key, known in (("switches", [s.name for s in topo.switches]), ("nics", [h.name for h in topo.hosts])):
        nodes = getattr(cfg, key)
        if not isinstance(nodes, dict):
            raise SettingsError(f"{where}: {key}: expected a mapping of names")
        for node in nodes:
            if node not in known:
                raise SettingsError(f"{where}: {key}.{node}: no such node in {topo.name} ({', '.join(known)})")
            try:
                cfg.settings_of(node)
            except SettingsError as e:
                raise SettingsError(f"{where}: {key}.{node}: {e}") from None
    return cfg


def load_config(path: Path, topo) -> FabricConfig:
    try:
        text = path.read_text()
    except OSError as e:
        raise SettingsError(f"{path}: {e.strerror}") from None
    return parse_config(text, topo, str(path))


def canary_set(text: str | None, topo) -> set[str] | None:
    """``leaf1,h1_1`` -> the node names (None: every node); unknown names refused."""
    if text is None:
        return None
    names = {n.strip() for n in text.split(",") if n.strip()}
    known = {s.name for s in topo.switches} | {h.name for h in topo.hosts}
    bad = sorted(names - known)
    if bad or not names:
        raise SettingsError(f"--canary: unknown node(s) {', '.join(bad) or '(none given)'}")
    return names


@dataclass
class NodeSettings:
    """The settings each switch and each NIC runs (or should run)."""

    switches: dict[str, Settings]
    nics: dict[str, Settings]

    def to_dict(self) -> dict[str, Any]:
        return {"switches": {k: v.to_dict() for k, v in self.switches.items()},
                "nics": {k: v.to_dict() for k, v in self.nics.items()}}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> NodeSettings:
        return cls({k: Settings().with_overrides(v) for k, v in d["switches"].items()},
                   {k: Settings().with_overrides(v) for k, v in d["nics"].items()})


def uniform(topo, settings: Settings) -> NodeSettings:
    return NodeSettings({s.name: settings for s in topo.switches}, {h.name: settings for h in topo.hosts})


def target(current: NodeSettings, cfg: FabricConfig, nodes: set[str] | None) -> NodeSettings:
    """``current`` with the config applied to ``nodes`` (all when None)."""
    def pick(name: str, now: Settings) -> Settings:
        return cfg.settings_of(name) if nodes is None or name in nodes else now

    return NodeSettings({k: pick(k, v) for k, v in current.switches.items()},
                        {k: pick(k, v) for k, v in current.nics.items()})


def node_intents(ctl, ns: NodeSettings) -> dict[str, Intent]:
    cache: dict[str, dict[str, Intent]] = {}
    out = {}
    for sw, st in ns.switches.items():
        key = json.dumps(st.to_dict(), sort_keys=True)
        if key not in cache:
            cache[key] = ctl.intents(st)
        out[sw] = cache[key][sw]
    return out


def _entry_name(table: str, entry) -> str:
    return f"{table} {' '.join(f'{k}={format_match(m)}' for k, m in sorted(entry.match.items()))}"


def intent_changes(old: Intent, new: Intent) -> list[str]:
    """One line per added (+), removed (-) or modified (~) object."""
    lines: list[str] = []

    def compare(old_map: dict, new_map: dict, name) -> None:
        for key in new_map:
            if key not in old_map:
                lines.append(f"+ {name(key, new_map[key])}")
            elif old_map[key] != new_map[key]:
                lines.append(f"~ {name(key, new_map[key])}")
        for key in old_map:
            if key not in new_map:
                lines.append(f"- {name(key, old_map[key])}")

    compare(old.entries, new.entries, lambda k, v: _entry_name(*v))
    compare(old.defaults, new.defaults, lambda k, v: f"{k} default action")
    compare(old.members, new.members, lambda k, v: f"member {k[0]}#{k[1]}")
    compare(old.groups, new.groups, lambda k, v: f"group {k[0]}#{k[1]}")
    compare(old.clone_sessions, new.clone_sessions, lambda k, v: f"clone session {k}")
    return lines


def nic_changes(topo, old: Settings, new: Settings) -> list[str]:
    a, b = fabric_rules.nic_config(topo, old), fabric_rules.nic_config(topo, new)
    return [f"~ {k}: {a[k]!r} -> {b[k]!r}" for k in b if a[k] != b[k]]


def describe_diff(ctl, current: NodeSettings, new: NodeSettings) -> list[str]:
    """What moving from ``current`` to ``new`` changes, per switch (entries) and NIC (settings)."""
    old_i, new_i = ctl.installed, node_intents(ctl, new)
    out: list[str] = []
    for sw in new.switches:
        lines = intent_changes(old_i[sw], new_i[sw])
        out.append(f"{sw}: {len(lines)} change(s)" if lines else f"{sw}: unchanged")
        out += [f"  {line}" for line in lines]
    for host in new.nics:
        lines = nic_changes(ctl.topo, current.nics[host], new.nics[host])
        out.append(f"{host}: {len(lines)} NIC setting(s) changed" if lines else f"{host}: unchanged")
        out += [f"  {line}" for line in lines]
    return out


def apply_settings(ctl, current: NodeSettings, new: NodeSettings) -> int:
    """Write ``new`` to every switch and NIC; on any failure put back everything written and
    re-raise. Returns the number of switch updates written."""
    desired = node_intents(ctl, new)
    before = dict(ctl.installed)
    done: list[str] = []
    written = 0
    try:
        for sw, conn in ctl.conns.items():
            updates = diff(ctl.p4, ctl.installed[sw], desired[sw])
            done.append(sw)
            conn.write(updates)
            ctl.installed[sw] = desired[sw]
            written += len(updates)
        for host, nic in ctl.nics.items():
            if fabric_rules.nic_config(ctl.topo, new.nics[host]) != fabric_rules.nic_config(ctl.topo, current.nics[host]):
                done.append(host)
                fabric_rules.configure_nic(nic, ctl.topo, host, new.nics[host])
    except Exception:
        _restore(ctl, current, before, done)
        raise
    return written


def _restore(ctl, current: NodeSettings, before: dict[str, Intent], done: list[str]) -> None:
    """Put every node in ``done`` back; one that refuses does not stop the others (it is
    logged, and the original error is what the caller sees)."""
    for node in reversed(done):
        try:
            if node in ctl.conns:
                held = ctl.read_intent(node, before[node].defaults)  # what a failed batch left
                ctl.conns[node].write(diff(ctl.p4, held, before[node]))
                ctl.installed[node] = before[node]
            else:
                fabric_rules.configure_nic(ctl.nics[node], ctl.topo, node, current.nics[node])
        except Exception as e:  # noqa: BLE001 - restore the rest regardless
            log.error("%s: could not restore the previous configuration: %s", node, e)


def save_previous(state_dir: Path, ns: NodeSettings, base: dict[str, Any] | None = None) -> Path:
    """Keep the settings before a rollout (and ``base``: the state file's profile and
    overrides then) for ``--rollback``."""
    path = state_dir / PREVIOUS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({**ns.to_dict(), "base": base}, indent=1))
    tmp.replace(path)
    return path


def load_previous(state_dir: Path) -> tuple[NodeSettings, dict[str, Any] | None]:
    path = state_dir / PREVIOUS_FILE
    if not path.exists():
        raise SettingsError(f"nothing to roll back: {path} does not exist")
    d = json.loads(path.read_text())
    return NodeSettings.from_dict(d), d.get("base")
