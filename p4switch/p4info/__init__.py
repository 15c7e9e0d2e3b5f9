"""P4Info generation (ids as p4c assigns them) and the target's device config format."""

from __future__ import annotations

from typing import Any

from p4.config.v1 import p4info_pb2

from p4switch.p4info.build import build_p4info, p4info_to_text
from p4switch.p4info.collect import P4InfoError, collect
from p4switch.p4info.ids import IdError

__all__ = ["generate_p4info", "p4info_to_text", "P4InfoError", "IdError"]


def generate_p4info(checked: Any) -> p4info_pb2.P4Info:
    """The P4Info of a checked program (``p4switch.frontend.compile_file`` result).

    Raises :class:`P4InfoError` or :class:`IdError` (both ``ValueError``) for programs whose
    control-plane API cannot be expressed, e.g. duplicate ``@id`` values.
    """
    return build_p4info(collect(checked))
