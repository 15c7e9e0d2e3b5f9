"""The compiled fabric program as SetForwardingPipelineConfig takes it, for either target.

Compiling is ``lab.targets.compile_program`` (the one place that knows both compilers:
``p4switch-compile`` for our target, ``p4c --target bmv2`` for BMv2); this module adds the
loaded P4Info, the device config bytes and a cookie that identifies the program on a switch.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from p4.config.v1 import p4info_pb2

from lab.targets import compile_program
from p4rt.p4info import load_p4info

REPO = Path(__file__).resolve().parent.parent
FABRIC_P4 = REPO / "p4src" / "fabric.p4"


@dataclass
class Pipeline:
    p4info: p4info_pb2.P4Info
    device_config: bytes
    p4info_path: Path
    config_path: Path

    @property
    def for_our_target(self) -> bool:
        """Whether the program was compiled for our target (its device config names it,
        p4switch/p4info/device_config.py) rather than BMv2."""
        try:
            return json.loads(self.device_config).get("target") == "p4switch"
        except (ValueError, UnicodeDecodeError, AttributeError):
            return False

    @property
    def clone_cos_supported(self) -> bool:
        """Whether clone sessions may carry a class of service: our target honours it; BMv2's
        P4Runtime layer refuses anything but 0 (UNIMPLEMENTED)."""
        return self.for_our_target

    def time_scale(self, dilation: float) -> float:
        """The program's timestamp microseconds per fabric microsecond: our target dilates its
        own clock (1); BMv2 stamps wall-clock microseconds, so a fabric dilated D times needs D."""
        return 1.0 if self.for_our_target else float(dilation)

    @property
    def cookie(self) -> int:
        """Identifies this exact program on a switch (GetForwardingPipelineConfig cookie)."""
        return int.from_bytes(hashlib.sha256(self.device_config).digest()[:8], "big") >> 1


def compile_fabric(target: str, out_dir: Path, program: Path = FABRIC_P4) -> Pipeline:
    """Compile fabric.p4 (or ``program``); errors raise RuntimeError with the compiler's text."""
    compiled = compile_program(target, program, out_dir, include_dirs=[str(program.parent)])
    return load_compiled(compiled.p4info_path, compiled.device_config_path)


def load_compiled(p4info_path: Path, config_path: Path) -> Pipeline:
    return Pipeline(load_p4info(p4info_path), Path(config_path).read_bytes(), Path(p4info_path), Path(config_path))
