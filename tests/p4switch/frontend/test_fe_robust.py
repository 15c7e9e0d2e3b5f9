"""Bad input never escapes as a Python exception: mutated programs give CompileError.

A fixed-seed set of token-level mutations (deleted, duplicated, swapped or replaced
tokens, other identifiers of the same program) of a real program; every outcome must be
either a successful compile or a CompileError with a location.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from p4switch.frontend import CompileError, compile_source
from p4switch.frontend.preprocess import preprocess

pytestmark = pytest.mark.slow  # mutation fuzzing of programs

PROGRAM = Path(__file__).parent / "programs" / "externs.p4"
FILLERS = ["bit<8>", "1", "8w1", "true", ";", "{", "}", "(", ")", ".", ",", "=", "<", ">",
           "apply", "state", "_", "default", "&&&", "..", "++", "{#}", "[0]", "[3:0]",
           "(bit<8>)", "error", "exit", "return", "NoAction", "isValid()", "hdr.eth"]


def _mutations(count: int, seed: int) -> list[str]:
    text = preprocess(str(PROGRAM))
    lines = text.split("\n")
    first_user_line = max(i for i, line in enumerate(lines) if str(PROGRAM) in line
                          and line.startswith("#"))
    candidates = [i for i, line in enumerate(lines) if i > first_user_line and line.strip()
                  and not line.startswith("#")]
    idents = sorted(set(re.findall(r"[A-Za-z_]\w*", "\n".join(lines[first_user_line:]))))
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        j = rng.choice(candidates)
        toks = re.findall(r"\w+|[^\w\s]", lines[j])
        if not toks:
            continue
        k = rng.randrange(len(toks))
        op = rng.random()
        if op < 0.25:
            toks[k] = rng.choice(FILLERS)
        elif op < 0.5:
            toks[k] = rng.choice(idents)
        elif op < 0.7:
            del toks[k]
        elif op < 0.85:
            toks.insert(k, rng.choice(FILLERS))
        else:
            k2 = rng.randrange(len(toks))
            toks[k], toks[k2] = toks[k2], toks[k]
        mutated = list(lines)
        mutated[j] = " ".join(toks)
        out.append("\n".join(mutated))
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_mutated_programs_fail_cleanly(seed):
    errors = 0
    for text in _mutations(25, seed):
        try:
            compile_source(text, "mutant.p4")
        except CompileError as e:
            errors += 1
            assert str(e).startswith(f"{e.file}:{e.line}:{e.col}: error: {e.message}")
            if e.line > 0:  # whole-program errors (no 'main') have no line
                assert str(e).count("\n") == 2, str(e)  # message, source line, caret
    assert errors > 0
