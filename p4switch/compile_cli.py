"""``p4switch-compile``: the p4c-like compiler driver of our target.

    p4switch-compile prog.p4 [-I DIR] [-D X=Y] [--p4runtime-files out.p4info.txtpb] [-o out.json]

Writes the device config (see ``p4switch.p4info.device_config``) and, when asked, the P4Info
in the formats p4c picks by suffix (.txt/.txtpb text, .json JSON, .bin binary). p4c options
that do not apply to a software target (``--target``, ``--arch``, ``--std``, ``-b``) are
accepted so existing build scripts run unchanged. Errors print as ``file:line:col: error: ...``
and exit with status 1, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from google.protobuf import json_format

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
    p.add_argument("--target", default="bmv2", help="accepted for p4c compatibility")
    p.add_argument("--arch", default="v1model", help="only v1model is supported")
    p.add_argument("--std", default="p4-16", help="only p4-16 is supported")
    p.add_argument("-b", dest="backend", default=None, help="accepted for p4c compatibility")
    return p


def _defines(items: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, _, value = item.partition("=")
        out[key] = value if _ else "1"
    return out


def _output_path(source: Path, output: str | None) -> Path:
    if output is None:
        return Path(source.stem + ".json")
    out = Path(output)
    if output.endswith(os.sep) or out.is_dir():
        return out / (source.stem + ".json")
    return out


def _write_p4info(p4info, files: str) -> None:
    for name in filter(None, files.split(",")):
        suffix = Path(name).suffix
        if suffix in (".txt", ".txtpb"):
            Path(name).write_text(p4info_to_text(p4info))
        elif suffix == ".json":
            Path(name).write_text(json_format.MessageToJson(p4info, indent=2) + "\n")
        elif suffix == ".bin":
            Path(name).write_bytes(p4info.SerializeToString())
        else:
            raise ValueError(f"{name}: could not detect P4Runtime file format from suffix; "
                             "known suffixes are .txt, .txtpb, .json, .bin")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from p4switch.frontend import CompileError, compile_file

    if args.arch != "v1model":
        print(f"error: architecture {args.arch!r} is not supported (only v1model)", file=sys.stderr)
        return 1
    source = Path(args.source)
    try:
        checked = compile_file(str(source), include_dirs=args.include, defines=_defines(args.define))
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
