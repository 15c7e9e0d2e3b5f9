"""``p4switch-compile``: the p4c-like compiler driver of our target.

    p4switch-compile prog.p4 [-I DIR] [-D X=Y] [--p4runtime-files out.p4info.txtpb] [-o out.json]

Writes the device config (see ``p4switch.p4info.device_config``) and, when asked, the P4Info
in the formats p4c picks by suffix (.txt/.txtpb text, .json JSON, .bin binary). p4c options
that do not apply to a software target (``--arch``, ``--std``, ``-b``) are accepted so
existing build scripts run unchanged. ``--target bmv2`` (the default and the only target)
also refuses what p4c's BMv2 back end refuses (``p4switch.frontend.bmv2_limits``: shift
amounts wider than 8 bits, headers not a whole number of bytes, ...), so a program this
compiler accepts also compiles with ``p4c --target bmv2``. Errors print as
``file:line:col: error: ...`` and exit with status 1, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from google.protobuf import json_format
from p4.config.v1 import p4info_pb2

from p4switch.frontend import CompileError, compile_file
from p4switch.p4info import IdError, P4InfoError, generate_p4info, p4info_to_text
from p4switch.p4info.device_config import encode


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="p4switch-compile", description="Compile a P4-16 v1model program for p4switch.")
    p.add_argument("source", help="P4 program")
    p.add_argument("-I", dest="include", action="append", default=[], metavar="DIR", help="include directory")
    p.add_argument("-D", dest="define", action="append", default=[], metavar="X[=Y]", help="preprocessor define")
    p.add_argument("--p4runtime-files", default="", metavar="FILES",
                   help="comma-separated P4Info outputs; format from suffix: .txt/.txtpb, .json, .bin")
    p.add_argument("-o", dest="output", default=None, help="device config file, or directory for <prog>.json")
    p.add_argument("--target", default="bmv2", help="only bmv2: refuse what p4c's BMv2 back end refuses")
    p.add_argument("--arch", default="v1model", help="only v1model is supported")
    p.add_argument("--std", default="p4-16", help="only p4-16 is supported")
    p.add_argument("-b", dest="backend", default=None, help="accepted for p4c compatibility")
    return p


def parse_defines(items: list[str]) -> dict[str, str]:
    """``-D`` arguments as cpp takes them: ``X=Y`` defines X as Y, a bare ``X`` as 1."""
    out: dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        out[key] = value if eq else "1"
    return out


def _output_path(source: Path, output: str | None) -> Path:
    if output is None:
        return Path(source.stem + ".json")
    out = Path(output)
    if output.endswith(os.sep) or out.is_dir():
        return out / (source.stem + ".json")
    return out


_P4INFO_FORMATS: dict[str, Callable[[p4info_pb2.P4Info], str | bytes]] = {
    ".txt": p4info_to_text,
    ".txtpb": p4info_to_text,
    ".json": lambda p4info: json_format.MessageToJson(p4info, indent=2) + "\n",
    ".bin": lambda p4info: p4info.SerializeToString(),
}


def _write_p4info(p4info: p4info_pb2.P4Info, files: str) -> None:
    """Write every requested P4Info file; a name with an unknown suffix is refused before
    anything is written, so a typo does not leave half of the outputs stale."""
    names = [Path(name) for name in files.split(",") if name]
    for path in names:
        if path.suffix not in _P4INFO_FORMATS:
            raise ValueError(f"{path}: could not detect P4Runtime file format from suffix; "
                             "known suffixes are .txt, .txtpb, .json, .bin")
    for path in names:
        data = _P4INFO_FORMATS[path.suffix](p4info)
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data)


def main(argv: list[str] | None = None) -> int:
    """Exit status 0 on success, 1 on any error (printed, never a traceback)."""
    args = _parser().parse_args(argv)

    if args.arch != "v1model":
        print(f"error: architecture {args.arch!r} is not supported (only v1model)", file=sys.stderr)
        return 1
    if args.target != "bmv2":
        print(f"error: target {args.target!r} is not supported (only bmv2)", file=sys.stderr)
        return 1
    source = Path(args.source)
    try:
        checked = compile_file(str(source), include_dirs=args.include, defines=parse_defines(args.define),
                               target=args.target)
        p4info = generate_p4info(checked)
        if args.p4runtime_files:
            _write_p4info(p4info, args.p4runtime_files)
        _output_path(source, args.output).write_bytes(encode(source.name, checked.source_text))
    except CompileError as e:
        print(str(e), file=sys.stderr)
        return 1
    except (P4InfoError, IdError) as e:
        loc = getattr(getattr(e, "node", None), "loc", None)
        print(f"{loc}: error: {e}" if loc is not None else f"{source}: error: {e}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
