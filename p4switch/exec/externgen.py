"""Code generation for v1model extern calls, one small function per extern: a table keyed by
extern type (methods) or function name, looked up by StmtGen instead of an if/elif ladder.

Each generator receives the StmtGen ``g`` of the function being generated, the call node and
its arguments, and writes statements through ``g.o`` / ``g.store``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from p4switch.exec import hashes
from p4switch.exec.codegen import scalar_width, underlying
from p4switch.exec.externs import NATIVE_CELL_BITS, Register
from p4switch.frontend import ast as A

Args = list[A.Expression]


# a literal, local or attribute chain: reading it twice costs less than a call and changes nothing
_PURE = re.compile(r"-?\d+|[A-Za-z_][\w.]*")


def _local(g: Any, code: str, hint: str) -> str:
    """``code`` itself when it is pure, else a temporary holding its value."""
    if _PURE.fullmatch(code):
        return code
    t = g.scope.tmp(hint)
    g.o(f"{t} = {code}")
    return t


def register_read(g: Any, obj: str, idx: str) -> str:
    """Inline ``Register.p_read``: the cell, or 0 outside the array (BMv2 ignores the access)."""
    reg = g.pc.ns[obj]
    if not _PURE.fullmatch(idx):
        return f"{obj}.p_read({idx})"
    cell = f"{_cells(g, obj, reg)}[{idx}]"
    if reg.width <= NATIVE_CELL_BITS:  # the i64 as an int: else mypyc boxes the conditional's value
        cell = f"int({cell})"
    return f"({cell} if 0 <= {idx} < {reg.size} else 0)"


def _cells(g: Any, obj: str, reg: Register) -> str:
    """The register's cells as a global of their own (the same array for the register's life:
    ``Register.reset`` empties it in place), which mypyc indexes without an attribute look-up:
    typed as what they are (``Register``), a native array's items are machine ints."""
    kind = "vec[i64]" if reg.width <= NATIVE_CELL_BITS else "list[int]"
    return g.pc.bind(f"{obj}_cells", reg.cells, kind)


# ---- extern object methods ---------------------------------------------------------------------
def _register(g: Any, c: A.MethodCall, name: str, args: Args, obj: str) -> None:
    if name == "read" and len(args) == 2:
        idx = g.expr(args[1])
        g.store(args[0], register_read(g, obj, idx))
    elif name == "write":
        i, v = g.expr(args[0]), g.expr(args[1])
        g.flush()
        reg = g.pc.ns[obj]
        i = _local(g, i, "i")
        g.o(f"if 0 <= {i} < {reg.size}: {_cells(g, obj, reg)}[{i}] = ({v}) & {(1 << reg.width) - 1}")
    else:
        g.flush()
        g.o(g.expr(c))


def _counter(g: Any, c: A.MethodCall, name: str, args: Args, obj: str) -> None:
    """Inline ``Counter.count``: outside the array the packet is not counted (BMv2)."""
    i = g.expr(args[0])
    g.flush()
    i = _local(g, i, "i")
    counter = g.pc.ns[obj]
    packets = g.pc.bind(f"{obj}_packets", counter.packets, "vec[i64]")  # arrays for the counter's life
    nbytes = g.pc.bind(f"{obj}_bytes", counter.bytes, "vec[i64]")
    g.o(f"if 0 <= {i} < {counter.size}:")
    with g.o.indent():  # spelled out, as ``+=`` on an item went through the number protocol
        g.o(f"{packets}[{i}] = {packets}[{i}] + 1; {nbytes}[{i}] = {nbytes}[{i}] + ctx.nbytes")


def _direct_counter(g: Any, c: A.MethodCall, name: str, args: Args, obj: str) -> None:
    """Nothing to generate: the table counts on every hit (BMv2)."""


def _meter(g: Any, c: A.MethodCall, name: str, args: Args, obj: str) -> None:
    i = g.expr(args[0])
    w = scalar_width(args[1].type) or 2
    g.store(args[1], f"({obj}.p_execute({i}, ctx.nbytes, ctx.now) & {(1 << w) - 1})")


def _direct_meter(g: Any, c: A.MethodCall, name: str, args: Args, obj: str) -> None:
    g.store(args[0], f"{obj}.color")


EXTERN_METHODS: dict[str, Callable[[Any, A.MethodCall, str, Args, str], None]] = {
    "register": _register,
    "counter": _counter,
    "direct_counter": _direct_counter,
    "meter": _meter,
    "direct_meter": _direct_meter,
}


# ---- extern functions --------------------------------------------------------------------------
def _mark_to_drop(g: Any, c: A.MethodCall, name: str, args: Args) -> None:
    sm = g.expr(args[0]) if args else "ctx.sm"
    g.flush()
    g.o(f"{sm}.egress_spec = 511")
    g.o(f"{sm}.mcast_grp = 0")


def _hash(g: Any, c: A.MethodCall, name: str, args: Args) -> None:
    """v1model ``hash()``. A list of fixed-width fields goes to a ``FieldHash`` of its own,
    which remembers the hash per field values (``random`` excepted); varbit data is packed and
    hashed every time."""
    algo = g._algo(args[1], c)
    base, mx = g.expr(args[2]), g.expr(args[4])
    fields = g.flatten(args[3])
    if all(w.isdigit() for _, w, _ in fields):
        memo = g.pc.add_object(hashes.FieldHash(g.pc.ns[algo], [int(w) for _, w, _ in fields]), "hash")
        values = "".join((v if cond is None else f"({v} if {cond} else None)") + ", " for v, _, cond in fields)
        h = f"{memo}(({values}))"
    else:
        h = f"{algo}({g.pack(args[3], fields=fields)})"
    w = scalar_width(args[0].type) or 32
    g.store(args[0], f"(hash_with_base({h}, {base}, {mx}) & {(1 << w) - 1})")


def _random(g: Any, c: A.MethodCall, name: str, args: Args) -> None:
    lo, hi = g.expr(args[1]), g.expr(args[2])
    g.store(args[0], f"ctx.random({lo}, {hi})")


def _csum16_of_int(g: Any, data: str) -> str:
    """``hashes.csum16_int`` of the packed-int expression ``data``, inline: the packed value
    goes to a temporary, the result is an expression over it (no call per checksum)."""
    n = g.scope.tmp("n")
    g.o(f"{n} = {data}")
    return f"(~({n} % 65535 or (65535 if {n} else 0)) & 65535)"


def _verify_checksum(g: Any, c: A.MethodCall, name: str, args: Args) -> None:
    cond = g.expr(args[0])
    algo, data = g._digest_call(args[3], args[1], name.endswith("payload"), c)
    ck = g.expr(args[2])
    g.flush()
    if algo != "H_csum16_int":
        g.o(f"if {cond} and {algo}({data}) != {ck}: ctx.sm.checksum_error = 1")
        return
    g.o(f"if {cond}:")
    with g.o.indent():
        g.o(f"if {_csum16_of_int(g, data)} != {ck}: ctx.sm.checksum_error = 1")


def _update_checksum(g: Any, c: A.MethodCall, name: str, args: Args) -> None:
    cond = g.expr(args[0])
    algo, data = g._digest_call(args[3], args[1], name.endswith("payload"), c)
    w = scalar_width(args[2].type) or 16
    g.flush()
    g.o(f"if {cond}:")
    with g.o.indent():
        value = _csum16_of_int(g, data) if algo == "H_csum16_int" else f"{algo}({data})"
        if algo == "H_csum16_int" and (isinstance(args[2], A.Member) and args[2].kind == "field"
                                       and g.pc.types.kept_fields(underlying(args[2].expr.type))):
            # a header whose checksum is already right keeps its extracted bytes
            t = g.scope.tmp("ck")
            g.o(f"{t} = {value} & {(1 << w) - 1}")
            g.o(f"if {t} != {g.expr(args[2])}:")
            with g.o.indent():
                g.store(args[2], t)
        else:
            g.store(args[2], f"({value} & {(1 << w) - 1})")


def _clone(g: Any, c: A.MethodCall, name: str, args: Args) -> None:
    ct = g.expr(args[0])
    sess = g.expr(args[1])
    fl = g.expr(args[2]) if name == "clone_preserving_field_list" else "None"
    if name == "clone3":
        fl = str(g.pc.data_field_list(args[2]))
    g.flush()
    g.o(f"ctx.clone_type = {ct}; ctx.clone_session = {sess}; ctx.clone_fl = {fl}")


def _field_list_arg(g: Any, name: str, args: Args) -> str:
    """The field-list argument of resubmit/recirculate (``-1``: none)."""
    fl = g.expr(args[0]) if name.endswith("list") else "-1"
    if not name.endswith("list") and args:
        fl = str(g.pc.data_field_list(args[0]) or -1)
    return fl


def _resubmit(g: Any, c: A.MethodCall, name: str, args: Args) -> None:
    fl = _field_list_arg(g, name, args)
    g.flush()
    g.o(f"ctx.resubmit_fl = {fl}")


def _recirculate(g: Any, c: A.MethodCall, name: str, args: Args) -> None:
    fl = _field_list_arg(g, name, args)
    g.flush()
    g.o(f"ctx.recirc_fl = {fl}")


def _truncate(g: Any, c: A.MethodCall, name: str, args: Args) -> None:
    n = g.expr(args[0])
    g.flush()
    g.o(f"ctx.truncate = {n}")


def _assert(g: Any, c: A.MethodCall, name: str, args: Args) -> None:
    cond = g.expr(args[0])
    g.flush()
    g.o(f"if not {cond}: raise AssertionFailed({str(c.loc)!r})")


def _log_msg(g: Any, c: A.MethodCall, name: str, args: Args) -> None:
    msg = g.expr(args[0])
    vals = "()"
    if len(args) > 1:
        vals = g._flat_tuple(args[1])
    g.flush()
    g.o(f"ctx.log_msg({msg}, {vals})")


def _digest(g: Any, c: A.MethodCall, name: str, args: Args) -> None:
    g.digest(c, args)


EXTERN_FUNCTIONS: dict[str, Callable[[Any, A.MethodCall, str, Args], None]] = {
    "mark_to_drop": _mark_to_drop,
    "hash": _hash,
    "random": _random,
    "verify_checksum": _verify_checksum,
    "verify_checksum_with_payload": _verify_checksum,
    "update_checksum": _update_checksum,
    "update_checksum_with_payload": _update_checksum,
    "clone": _clone,
    "clone3": _clone,
    "clone_preserving_field_list": _clone,
    "resubmit": _resubmit,
    "resubmit_preserving_field_list": _resubmit,
    "recirculate": _recirculate,
    "recirculate_preserving_field_list": _recirculate,
    "truncate": _truncate,
    "assert": _assert,
    "assume": _assert,
    "log_msg": _log_msg,
    "digest": _digest,
}
