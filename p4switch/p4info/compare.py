"""Compare our P4Info with p4c's on p4c's own test corpus (a development tool, not a test).

    python -m p4switch.p4info.compare P4C_TESTDATA [--stf-only] [-v] [PROGRAM ...]

``P4C_TESTDATA`` is p4c's ``testdata`` directory (e.g. from ``git archive`` of a p4c
checkout). Every ``p4_16_samples/NAME.p4`` written for v1model that has an expected
``p4_16_samples_outputs/NAME.p4.p4info.txtpb`` (p4c generates those with p4test; the P4Info
serializer is the one the BMv2 back end uses) is compiled with our front end, its P4Info built
and compared with p4c's, ignoring the order of repeated fields. Prints one line per program
that differs (``-v``: every difference) and a summary; exit status 0 when all programs our
front end accepts match. Nothing of p4c's is kept in this repository.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf import json_format, text_format
from p4.config.v1 import p4info_pb2

from p4switch.frontend import CompileError, compile_file
from p4switch.p4info import IdError, P4InfoError, generate_p4info

_V1MODEL = re.compile(r'^\s*#\s*include\s*[<"]v1model\.p4[>"]', re.MULTILINE)
# Repeated top-level entities, keyed by their preamble name when compared.
_ENTITIES = ("tables", "actions", "action_profiles", "counters", "direct_counters", "meters",
             "direct_meters", "controller_packet_metadata", "value_sets", "registers", "digests",
             "externs")


@dataclass
class Outcome:
    program: str
    status: str  # "match", "differ", "rejected" (a clear error), "crashed" (any other exception)
    differences: list[str] = field(default_factory=list)


def canonical(value: Any) -> Any:
    """A JSON value with every list sorted, so that order does not count."""
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [canonical(v) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    return value


def _as_dict(p4info: p4info_pb2.P4Info) -> dict[str, Any]:
    return json_format.MessageToDict(p4info, preserving_proto_field_name=True)


def _describe(path: str, ours: Any, theirs: Any, out: list[str]) -> None:
    """Differences between two canonical JSON values, one line each, as ``path: ours != p4c``."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for key in sorted(set(ours) | set(theirs)):
            _describe(f"{path}.{key}" if path else key, ours.get(key), theirs.get(key), out)
    elif ours != theirs:
        out.append(f"{path}: ours {json.dumps(ours, sort_keys=True)} != p4c {json.dumps(theirs, sort_keys=True)}")


def differences(ours: p4info_pb2.P4Info, theirs: p4info_pb2.P4Info) -> list[str]:
    """Every difference, with entities matched by name (ids are named rather than compared
    as numbers where an entity is missing altogether)."""
    a, b = _as_dict(ours), _as_dict(theirs)
    out: list[str] = []
    for kind in _ENTITIES:
        mine = {e["preamble"]["name"]: canonical(e) for e in a.pop(kind, [])}
        ref = {e["preamble"]["name"]: canonical(e) for e in b.pop(kind, [])}
        for name in sorted(set(mine) | set(ref)):
            if name not in ref:
                out.append(f"{kind}[{name}]: only in ours")
            elif name not in mine:
                out.append(f"{kind}[{name}]: missing (p4c has it)")
            else:
                _describe(f"{kind}[{name}]", mine[name], ref[name], out)
    _describe("", canonical(a), canonical(b), out)
    return out


def compare_program(source: Path, expected: Path) -> Outcome:
    theirs = text_format.Parse(expected.read_text(), p4info_pb2.P4Info())
    try:
        ours = generate_p4info(compile_file(str(source), include_dirs=[str(source.parent)], target=None))
    except (CompileError, P4InfoError, IdError) as e:
        return Outcome(source.stem, "rejected", [str(e).splitlines()[0]])
    except Exception as e:  # noqa: BLE001 - a front-end bug must not end the survey
        return Outcome(source.stem, "crashed", [f"{type(e).__name__}: {e}"])
    found = differences(ours, theirs)
    return Outcome(source.stem, "differ" if found else "match", found)


def corpus(testdata: Path, stf_only: bool) -> list[tuple[Path, Path]]:
    """(program, expected P4Info) pairs of p4c's v1model samples."""
    samples, outputs = testdata / "p4_16_samples", testdata / "p4_16_samples_outputs"
    pairs = []
    for source in sorted(samples.glob("*.p4")):
        expected = outputs / (source.name + ".p4info.txtpb")
        if not source.is_file() or not expected.is_file():  # dangling links in the archive
            continue
        if not _V1MODEL.search(source.read_text(errors="replace")):
            continue
        if stf_only and not source.with_suffix(".stf").is_file():
            continue
        pairs.append((source, expected))
    return pairs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m p4switch.p4info.compare", description=__doc__.split("\n\n")[0])
    p.add_argument("testdata", type=Path, help="p4c's testdata directory")
    p.add_argument("programs", nargs="*", help="only these programs (names without .p4)")
    p.add_argument("--stf-only", action="store_true", help="only programs with an STF test")
    p.add_argument("-v", "--verbose", action="store_true", help="print every difference")
    args = p.parse_intermixed_args(argv)
    pairs = corpus(args.testdata, args.stf_only)
    if args.programs:
        wanted = set(args.programs)
        pairs = [(s, e) for s, e in pairs if s.stem in wanted]
    counts = {"match": 0, "differ": 0, "rejected": 0, "crashed": 0}
    for source, expected in pairs:
        outcome = compare_program(source, expected)
        counts[outcome.status] += 1
        if outcome.status == "match":
            continue
        first = outcome.differences[0] if outcome.differences else ""
        more = f" (+{len(outcome.differences) - 1} more)" if len(outcome.differences) > 1 else ""
        print(f"{outcome.program}: {outcome.status}: {first}{more}")
        if args.verbose:
            for line in outcome.differences[1:]:
                print(f"    {line}")
    print(f"{counts['match']} of {len(pairs)} match p4c's P4Info; {counts['differ']} differ; "
          f"{counts['rejected']} rejected by our front end or P4Info generator; {counts['crashed']} crashed")
    return 0 if counts["differ"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
