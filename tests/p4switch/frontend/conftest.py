"""Shared by the front-end tests: a v1model program template to drop snippets into.

``v1prog(decls=..., locals=..., body=...)`` writes a complete program to a temporary file
(so cpp resolves ``#include <v1model.p4>`` and error messages can show the source line) and
returns its path; ``line_of(path, text)`` finds the 1-based line where ``text`` occurs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from p4switch.frontend import compile_file

PROGRAMS = Path(__file__).parent / "programs"

TEMPLATE = """#include <core.p4>
#include <v1model.p4>
header eth_t {{
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}}
struct headers_t {{
    eth_t eth;
}}
struct meta_t {{
    bit<8>  b8;
    bit<16> b16;
    bit<32> b32;
}}
{decls}
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{
    state start {{
        pkt.extract(hdr.eth);
        transition accept;
    }}
}}
control V(inout headers_t hdr, inout meta_t meta) {{ apply {{ }} }}
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{
{locals}
    apply {{
{body}
    }}
}}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{ apply {{ }} }}
control C(inout headers_t hdr, inout meta_t meta) {{ apply {{ }} }}
control D(packet_out pkt, in headers_t hdr) {{
    apply {{
{deparse}
        pkt.emit(hdr.eth);
    }}
}}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.fixture
def v1prog(tmp_path):
    def make(decls: str = "", locals: str = "", body: str = "", deparse: str = "") -> Path:
        path = tmp_path / "prog.p4"
        path.write_text(TEMPLATE.format(decls=decls, locals=locals, body=body, deparse=deparse))
        return path
    return make


def line_of(path: Path, text: str) -> int:
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if text in line:
            return i
    raise AssertionError(f"{text!r} not in {path}")


@pytest.fixture
def find_line():
    return line_of


@pytest.fixture(scope="session")
def sample():
    """The checked sample program ``programs/<name>.p4``, compiled once per session
    (tests only read the annotated AST)."""
    cache: dict = {}

    def get(name: str):
        if name not in cache:
            cache[name] = compile_file(str(PROGRAMS / f"{name}.p4"))
        return cache[name]
    return get
