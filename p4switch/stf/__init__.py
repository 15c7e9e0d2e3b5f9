"""STF (simple test framework) files as p4c's test corpus writes them, run on our target."""

from p4switch.stf.runner import StfError, StfResult, run_stf, run_stf_file

__all__ = ["StfError", "StfResult", "run_stf", "run_stf_file"]
