"""The ``bmv2-limits`` target pass alone, through the pass driver, on a checked program
(the limits themselves: test_fe_bmv2_limits.py)."""

from __future__ import annotations

import pytest

from p4switch.frontend import compile_file
from p4switch.frontend.bmv2_limits import Bmv2LimitError
from p4switch.frontend.passes import TARGET_PASSES, run_target_passes


def test_bmv2_runs_the_limits_pass_and_the_front_end_only_target_none(v1prog):
    assert [p.name for p in TARGET_PASSES["bmv2"]] == ["bmv2-limits"]
    path = v1prog(body="        meta.b32 = meta.b32 >> meta.b16;")
    checked = compile_file(str(path), target=None)  # front-end passes only: accepted
    run_target_passes(checked, None)
    with pytest.raises(Bmv2LimitError) as e:
        run_target_passes(checked, "bmv2")
    assert "shift amount limited to 8 bits on this target" in str(e.value)
    assert str(e.value).startswith(f"{path}:")
