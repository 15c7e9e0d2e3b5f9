"""The executor of the software v1model target: P4 programs compiled to Python, tables and
externs, and the v1model pipeline with BMv2's semantics."""

from p4switch.exec.pipeline import (
    DigestMessage,
    EgressJob,
    EgressResult,
    IngressResult,
    QueueMeta,
    RecirculatedFrame,
    V1Pipeline,
)
from p4switch.exec.program import LoadedProgram
from p4switch.exec.tables import ActionInfo, ActionProfile, KeyField, Table

__all__ = [
    "ActionInfo", "ActionProfile", "DigestMessage", "EgressJob", "EgressResult", "IngressResult",
    "KeyField", "LoadedProgram", "QueueMeta", "RecirculatedFrame", "Table", "V1Pipeline",
]
