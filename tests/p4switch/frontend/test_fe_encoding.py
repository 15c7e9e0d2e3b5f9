"""Sources that are not valid UTF-8 (a Latin-1 byte in a comment) compile as with p4c,
which reads bytes; errors further down still point at the right line and column."""

from __future__ import annotations

import pytest

from p4switch.exec import LoadedProgram, V1Pipeline
from p4switch.frontend import CompileError, compile_file

LATIN1_COMMENT = "        // r\u00e9seau: send to port 2 (caf\u00e9)\n".encode("latin-1")


def _with_latin1_comment(path, before: str) -> None:
    """Insert the Latin-1 comment line in front of the line holding ``before``."""
    data = path.read_bytes()
    at = data.index(before.encode())
    at = data.rindex(b"\n", 0, at) + 1
    path.write_bytes(data[:at] + LATIN1_COMMENT + data[at:])
    with pytest.raises(UnicodeDecodeError):
        path.read_bytes().decode("utf-8")


def test_latin1_comment_compiles_and_forwards(v1prog):
    path = v1prog(body="        sm.egress_spec = 2;")
    _with_latin1_comment(path, "sm.egress_spec = 2;")
    prog = LoadedProgram.from_checked(compile_file(str(path)))
    frame = bytes(range(14)) + b"payload"
    assert V1Pipeline(prog).process(1, frame) == [(2, frame)]


def test_error_after_latin1_byte_keeps_its_position(v1prog):
    path = v1prog(body="        meta.b8 = foo;")
    _with_latin1_comment(path, "meta.b8 = foo;")
    line = path.read_bytes().split(b"\n").index(b"        meta.b8 = foo;") + 1
    with pytest.raises(CompileError) as info:
        compile_file(str(path))
    text = str(info.value)
    assert text.startswith(f"{path}:{line}:19: error: 'foo' is not declared\n")
    assert "        meta.b8 = foo;\n" in text
