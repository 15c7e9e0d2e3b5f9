"""SetForwardingPipelineConfig / GetForwardingPipelineConfig for the device.

VERIFY compiles the device config and checks it against the P4Info without touching the
switch; VERIFY_AND_SAVE keeps it for a later COMMIT; VERIFY_AND_COMMIT installs it with empty
tables; RECONCILE_AND_COMMIT installs it and carries over the forwarding state that still fits
the new program (table entries whose table, key and actions exist unchanged by name, action
profile members and groups, multicast groups and clone sessions, digest configurations).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from p4.v1 import p4runtime_pb2

from p4rt import entries as E
from p4rt.errors import Code, P4RuntimeError, invalid
from p4rt.schema import Schema
from p4switch.exec import LoadedProgram
from p4switch.frontend import CompileError
from p4switch.p4info import device_config, generate_p4info
from p4switch.p4runtime.digests import DigestBatcher
from p4switch.p4runtime.oneshot import OneShots
from p4switch.p4runtime.p4info_check import check_p4info

log = logging.getLogger("p4switch.p4runtime")
Req = p4runtime_pb2.SetForwardingPipelineConfigRequest
Get = p4runtime_pb2.GetForwardingPipelineConfigRequest


def compile_config(config: p4runtime_pb2.ForwardingPipelineConfig, check: Callable[[bytes], Any]) -> Any:
    """Compile a device config to a LoadedProgram and check the P4Info describes it.
    ``check`` is the device's front end (``Device.check_config``: device config bytes -> the
    checked program), which a fabric of many switches shares between them."""
    if not config.p4info.ByteSize():  # a program without tables still has pkg_info and more
        raise invalid("the pipeline config has no P4Info")
    try:
        checked = check(config.p4_device_config)
        generated = _generated_p4info(checked)
        program = LoadedProgram.from_checked(checked)
    except CompileError as e:
        raise invalid(f"device config does not compile: {e}") from None
    except ValueError as e:
        raise invalid(str(e)) from None
    except Exception as e:  # noqa: BLE001 - an executor bug must not look like a bad request
        log.exception("loading the device config failed")
        raise P4RuntimeError(Code.INTERNAL, f"the target cannot load this program: {e}") from None
    check_p4info(config.p4info, generated)
    return program


# The P4Info each checked program generates (only compared with the pushed one): switches that
# share a checked program (Device.check_config in the simulator) generate it once. Weak keys:
# an entry lives as long as its program.
_GENERATED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_GENERATED_LOCK = threading.Lock()


def _generated_p4info(checked: Any) -> Any:
    with _GENERATED_LOCK:  # switches loading in parallel wait for the first one's result
        p4info = _GENERATED.get(checked)
        if p4info is None:
            p4info = _GENERATED[checked] = generate_p4info(checked)
        return p4info


class PipelineManager:
    """The device's current P4Info and device config, the one VERIFY_AND_SAVE kept for a
    later COMMIT, and the state that must be reset or carried over when either is replaced."""

    def __init__(self, device: Any, digests: DigestBatcher, control_lock: Any) -> None:
        self.device = device
        self.control_lock = control_lock  # no Write runs while the program is replaced
        self.digests = digests
        self.config: p4runtime_pb2.ForwardingPipelineConfig | None = None
        self.schema: Schema | None = None
        self.saved: tuple[p4runtime_pb2.ForwardingPipelineConfig, Any] | None = None
        self.oneshots = OneShots()  # kept by a reconcile, which carries the groups over too
        if getattr(device, "p4info", None) is not None and device.program is not None:
            # a switch started with a program (simple_switch_grpc PROGRAM.json style)
            self.config = p4runtime_pb2.ForwardingPipelineConfig(p4info=device.p4info)
            checked = getattr(device.program, "checked", None)
            if checked is not None:
                name = Path(checked.main.loc.file).name or "program.p4"
                self.config.p4_device_config = device_config.encode(name, checked.source_text)
            self.schema = Schema.build(device.p4info)

    def set(self, action: int, config: p4runtime_pb2.ForwardingPipelineConfig | None) -> None:
        """One SetForwardingPipelineConfig; raises P4RuntimeError with the spec's status."""
        if action == Req.UNSPECIFIED:
            raise invalid("SetForwardingPipelineConfig action is UNSPECIFIED")
        if action == Req.COMMIT:  # P4Runtime 1.4: COMMIT installs what VERIFY_AND_SAVE kept
            if config is not None:
                raise invalid("COMMIT takes no config: it installs the one saved by VERIFY_AND_SAVE")
            if self.saved is None:
                raise P4RuntimeError(Code.NOT_FOUND, "COMMIT without a config saved by VERIFY_AND_SAVE")
            config, program = self.saved
            self._install(config, program, reconcile=False)
            self.saved = None
            return
        if config is None:
            raise invalid("the request has no pipeline config")
        program = compile_config(config, self.device.check_config)
        if action == Req.VERIFY:
            return
        if action == Req.VERIFY_AND_SAVE:
            self.saved = (config, program)
        elif action == Req.VERIFY_AND_COMMIT:
            self._install(config, program, reconcile=False)
        elif action == Req.RECONCILE_AND_COMMIT:
            self._install(config, program, reconcile=True)
        else:
            raise P4RuntimeError(Code.UNIMPLEMENTED, f"pipeline config action {action} is not supported")

    def _install(self, config: p4runtime_pb2.ForwardingPipelineConfig, program: Any, reconcile: bool) -> None:
        with self.control_lock, self.device.lock:
            old = self.device.program
            self.device.set_program(program, config.p4info)
            self.schema = Schema.build(config.p4info)
            self.config = config
            if reconcile and old is not None:
                kept, lost = carry_over(old, program)
                log.info("reconcile: kept %d entries, dropped %d", kept, lost)
            else:
                self.digests.clear()
                self.oneshots = OneShots()

    def get(self, response_type: int) -> p4runtime_pb2.ForwardingPipelineConfig:
        """The parts of the config ``response_type`` asks for (the cookie always)."""
        if self.config is None:
            raise P4RuntimeError(Code.FAILED_PRECONDITION, "no forwarding pipeline config has been set")
        out = p4runtime_pb2.ForwardingPipelineConfig()
        if self.config.HasField("cookie"):
            out.cookie.CopyFrom(self.config.cookie)
        if response_type in (Get.ALL, Get.P4INFO_AND_COOKIE):
            out.p4info.CopyFrom(self.config.p4info)
        if response_type in (Get.ALL, Get.DEVICE_CONFIG_AND_COOKIE):
            out.p4_device_config = self.config.p4_device_config
        return out


def carry_over(old: Any, new: Any) -> tuple[int, int]:
    """Copy the control-plane state of ``old`` into ``new`` where it still fits."""
    kept = lost = 0

    def attempt(fn: Callable[..., None], *args: Any) -> None:
        nonlocal kept, lost
        try:
            fn(*args)
            kept += 1
        except (E.EntryError, KeyError, ValueError, TypeError):
            lost += 1

    for name, prof in old.action_profiles.items():
        target = new.action_profiles.get(name)
        if target is None:
            lost += len(prof.members) + len(prof.groups)
            continue
        for member_id, call in prof.members.items():
            attempt(target.add_member, member_id, call)
        for group_id, group in prof.groups.items():
            attempt(target.add_group, group_id, list(group.members), group.max_size)
    for name, table in old.tables.items():
        target = new.tables.get(name)
        if target is None or [k.name for k in target.key] != [k.name for k in table.key]:
            lost += len(table.entries())
            continue
        if not table.is_const:
            for entry in table.entries():  # an idle timer keeps running from the last hit
                last_hit = table.last_hit(entry.match, entry.priority) if table.support_timeout else 0
                attempt(target.insert, dataclasses.replace(entry), last_hit)
    for gid, replicas in old.pre.mc_groups.items():
        attempt(new.pre.set_mc_group, gid, list(replicas), old.pre.mc_metadata[gid])
    for session in old.pre.clone_sessions.values():
        attempt(new.pre.set_clone_session, session)
    return kept, lost
