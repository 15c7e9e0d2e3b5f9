"""One benchmark figure."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Result:
    name: str
    value: float
    unit: str
    detail: str = ""
