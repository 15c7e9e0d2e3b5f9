"""The instruction counter `make bench` uses to compare speed levers on a noisy machine."""

from __future__ import annotations

from bench.bench_instructions import _per_packet


def test_basic_l3_costs_a_plausible_and_repeatable_number_of_instructions_per_packet():
    """Counted twice under callgrind: a packet of basic L3 through the executor takes tens of
    thousands of machine instructions (not the start-up's millions, not zero: the counting
    window holds the packets), and the same number both times, whatever the load. Compiled
    by mypyc, the same packets take fewer (about 0.7 times as many)."""
    first, second = _per_packet("exec basic L3", "python"), _per_packet("exec basic L3", "python")
    assert 10_000 < first.value < 500_000, first
    assert abs(first.value - second.value) < 0.01 * first.value, (first.value, second.value)
    compiled = _per_packet("exec basic L3", "mypyc")
    assert compiled.value < 0.85 * first.value, (compiled.value, first.value)
