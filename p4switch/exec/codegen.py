"""Python source generation helpers: an indenting line buffer and the per-type classes
(headers, structs, header unions) that hold packet state.

Each P4 struct-like type becomes a Python class whose scalar fields default at class level,
so that creating a packet's state is cheap and field access is a plain attribute access. Headers get generated ``ext``
(extract from bytes) and ``emit`` (append to the output) methods with the field shifts
computed at load time, so parsing a header is one ``int.from_bytes`` and a few shifts.

A header extracted from the frame keeps its bytes as one int in ``r_`` (``raw_kept``
headers), and every generated field store patches that int too (``raw_patch``), so ``r_`` is
always None or exactly the packed fields: the deparser emits it with one ``to_bytes`` instead
of packing the fields again, and an IPv4-style checksum over the header's fields masks it.
That is for the Python backend, where one big int saves bytecodes. The mypyc backend keeps no
``r_``: it reads fields in 4-, 2- and 1-byte big-endian words of the frame, and packs checksum
inputs in byte- or 16-bit-word-sized chunks of the fields (``bit_chunks``) and headers in
32-bit ones, all machine-size ints, written straight into the frame being built (a
``librt.strings.BytesWriter``, whose word writes mypyc compiles to stores). Instead it keeps
where an extracted header's bytes are (``bytes_kept``: the frame in ``d_``, the offset in
``o_``), and every generated field store drops them (``d_ = None``), so a header nobody wrote
is emitted as a slice of the frame it came in with: the INT hops of earlier switches and a
RoCE packet's BTH at every hop.
"""

from __future__ import annotations

import itertools
import keyword
from collections.abc import Iterator

from p4switch.frontend import types as T

UNROLLED_STACK = 32  # header stacks up to this size are built element by element


class Lines:
    """An indenting buffer of Python source lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def __call__(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def indent(self) -> "_Indent":
        return _Indent(self)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


class _Indent:
    def __init__(self, lines: Lines) -> None:
        self.lines = lines

    def __enter__(self) -> None:
        self.lines.depth += 1

    def __exit__(self, *exc: object) -> None:
        self.lines.depth -= 1


def attr(name: str) -> str:
    """Python attribute name of a P4 field (``v_`` is reserved for validity)."""
    if keyword.iskeyword(name) or name in ("v_", "r_", "d_", "o_", "copy", "assign", "ext", "emit", "mk", "valid",
                                           "inval", "setv"):
        return name + "_f"
    return name


def underlying(t: T.P4Type) -> T.P4Type:
    return T.underlying(t)


def scalar_width(t: T.P4Type) -> int | None:
    """Width in bits of a bit-like type (bit/int/ser-enum/new type/bool), else None."""
    u = underlying(t)
    if isinstance(u, T.BitsType):
        return u.width
    if isinstance(u, T.BoolType):
        return 1
    return None


def is_signed(t: T.P4Type) -> bool:
    u = underlying(t)
    return isinstance(u, T.BitsType) and u.signed


def is_aggregate(t: T.P4Type) -> bool:
    return isinstance(t, (T.StructLikeType, T.StackType))


def raw_kept(t: T.P4Type) -> bool:
    """Whether headers of type ``t`` keep their extracted bytes in ``r_``: fixed size, whole
    bytes, only scalar fields (so the bytes are exactly what packing the fields gives)."""
    if not isinstance(t, T.HeaderType) or t.has_varbit():
        return False
    if any(isinstance(underlying(f.type), T.StructType) for f in t.fields):
        return False
    total = sum(w for _, w, _ in _leaf_fields(t))
    return total > 0 and total % 8 == 0


def raw_patch(t: T.HeaderType, h: str, a: str) -> str:
    """Statement keeping ``h.r_`` equal to the packed fields after field ``a`` of ``h`` (a pure
    expression) was assigned."""
    lo, w = raw_positions(t)[a]
    m = (1 << w) - 1
    keep = ((1 << sum(x for _, x, _ in _leaf_fields(t))) - 1) ^ (m << lo)
    return f"if {h}.r_ is not None: {h}.r_ = {h}.r_ & {keep} | ({h}.{a} & {m}) << {lo}"


def raw_positions(t: T.HeaderType) -> dict[str, tuple[int, int]]:
    """Attribute -> (lowest bit, width) of each field inside the header's bytes as one int."""
    out = {}
    shift = sum(w for _, w, _ in _leaf_fields(t))
    for a, w, _ in _leaf_fields(t):
        shift -= w
        out[a] = (shift, w)
    return out


def deparse_chunk_sizes(nbytes: int) -> list[int]:
    """Bit sizes of the words the compiled deparser writes an ``nbytes``-byte header in: 4-byte
    words, then 2 and 1 for the rest, so every word is a small int and one store."""
    return [32] * (nbytes // 4) + [16] * (nbytes % 4 // 2) + [8] * (nbytes % 2)


def word_writes(out: str, words: list[str], sizes: list[int]) -> list[str]:
    """Statements writing the big-endian words ``words`` (expressions of unsigned values of the
    bit ``sizes`` listed) to the ``BytesWriter`` ``out``. librt's word writers take signed
    values: the unsigned ones are moved into their range by flipping and subtracting the sign
    bit (two machine operations)."""
    lines = []
    for w, n in zip(words, sizes):
        if n == 8:
            lines.append(f"{out}.append({w})")
        else:
            sign = 1 << (n - 1)
            lines.append(f"write_i{n}_be({out}, (({w}) ^ {sign}) - {sign})")
    return lines


def word_read(first: int, nbytes: int) -> str:
    """Expression: the unsigned big-endian value of the ``nbytes`` (1 to 7) bytes of ``d`` at
    ``o + first``, read as 4-, 2- and 1-byte words (librt's readers, signed, masked back)."""
    out = []
    at, left = first, nbytes
    for n, reader in ((4, "read_i32_be"), (2, "read_i16_be"), (1, "")):  # 7 = 4 + 2 + 1 at most
        if n <= left:
            index = f"o + {at}" if at else "o"
            expr = f"(int({reader}(d, {index})) & {(1 << 8 * n) - 1})" if reader else f"d[{index}]"
            at, left = at + n, left - n
            out.append(f"({expr} << {8 * left})" if left else expr)
    return " | ".join(out)


def bit_chunks(fields: list[tuple[str, int]], size: int | list[int]) -> list[str]:
    """Expressions of the consecutive chunks of the bit string that ``fields`` (value code,
    width; most significant first) make: ``size`` bits each, as many as the fields need (zero
    bits appended up to a whole chunk), or the chunk sizes listed. Each is a small int built from
    slices of the fields it overlaps: what the mypyc backend packs with, where shifting one int
    of a whole header is a big-int operation per field."""
    total = sum(w for _, w in fields)
    sizes = size if isinstance(size, list) else [size] * -(-total // size)
    out: list[str] = []
    start = 0
    for n in sizes:
        end = start + n
        parts = []
        pos = 0
        for v, w in fields:
            lo, hi = max(pos, start), min(pos + w, end)  # the overlap, in bits from the top
            if lo < hi:
                x = v if pos + w == hi else f"({v} >> {pos + w - hi})"
                if lo > pos:  # bits above the overlap to mask off
                    x = f"({x} & {(1 << (hi - lo)) - 1})"
                parts.append(x if hi == end else f"({x} << {end - hi})")
            pos += w
        out.append(" | ".join(parts) or "0")
        start = end
    return out


class TypeClasses:
    """Generates one class per struct-like type on first use and the default-value code of
    any type."""

    def __init__(self, out: Lines, error_codes: dict[str, int]) -> None:
        self.out = out
        self.names: dict[int, str] = {}
        self.keep: list[T.P4Type] = []
        self.err = error_codes
        self.native = False  # generating for the mypyc backend (see ``extract_lines``)

    def raw_kept(self, t: T.P4Type) -> bool:
        """``raw_kept`` for the code being generated: the mypyc backend keeps no ``r_``, it
        packs from the fields in small ints (``bit_chunks``), where the Python backend saves
        bytecodes with one big int."""
        return not self.native and raw_kept(t)

    def bytes_kept(self, t: T.P4Type) -> bool:
        """Whether headers of type ``t`` remember the frame and offset they were extracted
        from (``d_``, ``o_``; the mypyc backend, for ``raw_kept`` types): taking a reference
        and an offset costs two slot stores, and an unchanged header is deparsed as one slice
        instead of packing its fields (a 32-byte INT hop: eight 4-byte chunks boxed for
        ``Struct.pack``)."""
        return self.native and raw_kept(t)

    def kept_fields(self, t: T.P4Type) -> list[str]:
        """The slots that hold a header's extracted bytes (``r_``, or ``d_`` and ``o_``):
        copied with the header, cleared when it is reset or made valid."""
        return ["r_"] if self.raw_kept(t) else ["d_", "o_"] if self.bytes_kept(t) else []

    def dropped_bytes(self, t: T.HeaderType, owner: str, a: str) -> str:
        """Statement keeping the extracted bytes of a ``kept_fields`` header (``owner``, a
        local or attribute chain) true after its field ``a`` was stored: ``r_`` patched,
        ``d_`` dropped."""
        return raw_patch(t, owner, a) if self.raw_kept(t) else f"{owner}.d_ = None"

    def default(self, t: T.P4Type) -> str:
        u = underlying(t) if not isinstance(t, T.EnumType) else t
        if isinstance(u, T.BitsType):
            return "0"
        if isinstance(u, T.BoolType):
            return "False"
        if isinstance(u, T.VarbitType):
            return "(0, 0)"
        if isinstance(u, T.ErrorType):
            return "0"
        if isinstance(u, T.EnumType):
            return repr(u.members[0]) if u.members else "''"
        if isinstance(u, T.StructLikeType):
            return f"{self.cls(u)}()"
        if isinstance(u, T.StackType):
            if u.size <= UNROLLED_STACK:  # a list display: no comprehension frame per packet
                return "Stack([" + ", ".join([self.default(u.elem)] * u.size) + "])"
            return f"Stack([{self.default(u.elem)} for _ in range({u.size})])"
        if isinstance(u, T.TupleType):
            return "(" + "".join(self.default(e) + ", " for e in u.elems) + ")"
        if isinstance(u, T.StringType):
            return "''"
        if isinstance(u, T.IntType):
            return "0"
        return "None"

    def annotation(self, t: T.P4Type) -> str:
        """The Python type the generated code holds a value of ``t`` in: with it, mypyc
        compiles a field access to a read of the object's slot, and a stack's list, index and
        methods to slot reads and native calls (``Stack``: the mypyc backend compiles the class
        into the program's module, ``native.module_text``); ``Any`` for values that are runtime
        objects or whose Python type varies."""
        u = underlying(t)
        if isinstance(u, T.BoolType):
            return "bool"
        if isinstance(u, (T.BitsType, T.IntType, T.ErrorType)):
            return "int"
        if isinstance(u, T.StructLikeType):
            return self.cls(u)
        if isinstance(u, T.StackType):
            return "Stack"
        return "Any"

    def cls(self, t: T.StructLikeType) -> str:
        name = self.names.get(id(t))
        if name is not None:
            return name
        name = f"C{len(self.names)}_{(t.name or 'anon').replace('.', '_')}"
        self.names[id(t)] = name
        self.keep.append(t)
        for f in t.fields:  # nested classes first
            ft = underlying(f.type)
            if isinstance(ft, T.StructLikeType):
                self.cls(ft)
            elif isinstance(ft, T.StackType) and isinstance(ft.elem, T.StructLikeType):
                self.cls(ft.elem)
        self._emit_class(t, name)
        return name

    def _reset_stores(self, target: str, t: T.StructLikeType, names: Iterator[int]) -> None:
        """``reset``'s statements for ``target``, a variable of type ``t``: every scalar its
        default, a header invalid without its kept bytes, the nested headers, structs and
        stack elements the same way in line (``names`` numbers their variables). A packet's
        headers are reset for reuse every packet, and a call of each one's own ``reset`` was
        a third of it."""
        o = self.out
        fields = [(attr(f.name), f.type) for f in t.fields]
        for a, ft in fields:
            if not is_aggregate(underlying(ft)):
                o(f"{target}.{a} = {self.default(ft)}")
        if isinstance(t, T.HeaderType):
            o(f"{target}.v_ = False")
            for k in self.kept_fields(t)[:1]:  # r_ or d_: o_ means nothing without d_
                o(f"{target}.{k} = None")
        for a, ft in fields:
            u = underlying(ft)
            if isinstance(u, T.StackType):  # typed, so compiled the loop is native
                n = next(names)
                o(f"_es{n}: list[{self.annotation(u.elem)}] = {target}.{a}.h")
                o(f"for _e{n} in _es{n}:")
                with o.indent():
                    self._reset_stores(f"_e{n}", underlying(u.elem), names)
                o(f"{target}.{a}.nxt = 0")
            elif isinstance(u, T.StructLikeType):
                n = next(names)
                o(f"_r{n} = {target}.{a}")
                self._reset_stores(f"_r{n}", u, names)

    def _emit_class(self, t: T.StructLikeType, name: str) -> None:
        """Scalar fields (and a header's validity) are class-level defaults, so creating a
        packet's headers costs one empty object each; only nested aggregates are built in
        ``__init__``. ``copy``, ``assign`` and ``setv`` name every field rather than going through
        ``__dict__``: reading an instance's ``__dict__`` turns its inline attribute values into
        a dictionary (CPython 3.11), which made the copy twice as costly and every later
        access to the object slower."""
        o = self.out
        fields = [(attr(f.name), f.type) for f in t.fields]
        is_header = isinstance(t, T.HeaderType)
        aggregates = [(a, ft) for a, ft in fields if is_aggregate(underlying(ft))]
        o(f"class {name}:")
        with o.indent():
            for a, ft in fields:
                if is_aggregate(underlying(ft)):
                    o(f"{a}: {self.annotation(ft)}")
                else:
                    o(f"{a}: {self.annotation(ft)} = {self.default(ft)}")
            if is_header:
                o("v_: bool = False")
                if self.raw_kept(t):
                    o("r_: int | None = None")
                if self.bytes_kept(t):
                    o("d_: bytes | None = None")
                    o("o_: int = 0")
            if aggregates:
                o("def __init__(self) -> None:")
                with o.indent():
                    for a, ft in aggregates:
                        o(f"self.{a} = {self.default(ft)}")
            scalars = [a for a, ft in fields if not is_aggregate(underlying(ft))]
            if is_header:
                scalars += ["v_"] + self.kept_fields(t)
            o(f"def copy(self) -> {name}:")
            with o.indent():
                o(f"c = {name}.__new__({name})" if aggregates else f"c = {name}()")
                for a in scalars:
                    o(f"c.{a} = self.{a}")
                for a, ft in aggregates:
                    o(f"c.{a} = self.{a}.copy()")
                o("return c")
            o("def reset(self) -> None:")  # as new, for a packet's headers reused (``entries.py``)
            with o.indent():
                self._reset_stores("self", t, itertools.count())
                o("return")
            o("def assign(self, x: Any) -> None:")  # an out/inout parameter's ``=``: x is a fresh value
            with o.indent():
                for a in scalars + [a for a, _ in aggregates]:
                    o(f"self.{a} = x.{a}")
                o("return")
            o("def __eq__(self, x: Any) -> bool:")
            with o.indent():
                if is_header:
                    o("if not self.v_ or not x.v_: return self.v_ == x.v_")
                cmp = " and ".join(f"self.{a} == x.{a}" for a, _ in fields) or "True"
                o(f"return {cmp}")
            o("@staticmethod")
            o("def mk(" + ", ".join(f"a{i}" for i in range(len(fields))) + "):")
            with o.indent():
                o(f"c = {name}()")
                for i, (a, _) in enumerate(fields):
                    o(f"c.{a} = a{i}")
                if is_header:
                    o("c.v_ = True")
                o("return c")
            if isinstance(t, T.HeaderUnionType):
                o("def valid(self):")
                with o.indent():
                    o("return " + (" or ".join(f"self.{a}.v_" for a, _ in fields) or "False"))
                o("def inval(self):")
                with o.indent():
                    for a, _ in fields:
                        o(f"self.{a}.v_ = False")
                    o("pass")
            if is_header:
                # setValid(): BMv2 (add_header) zeroes the fields of a header that was invalid
                o("def setv(self):")
                with o.indent():
                    o("if not self.v_:")
                    with o.indent():
                        for a, ft in fields:
                            if not is_aggregate(underlying(ft)):
                                o(f"self.{a} = {self.default(ft)}")
                        for k in self.kept_fields(t)[:1]:
                            o(f"self.{k} = None")
                        for a, ft in aggregates:
                            o(f"self.{a} = {self.default(ft)}")
                        o("self.v_ = True")
                if t.has_varbit():
                    self._emit_varbit_header(t)
                else:
                    self._emit_fixed_header(t)
        o("")

    def _emit_fixed_header(self, t: T.HeaderType) -> None:
        o = self.out
        o("def ext(self, d: bytes, o: int) -> int:")
        with o.indent():
            for line in self.extract_lines(t, "self", "e"):
                o(line)
            o("return e")
        o(f"def emit(self, out: {self.out_type()}) -> None:")
        with o.indent():
            o("if self.v_:")
            with o.indent():
                for line in self.emit_lines(t, "self", "out") or ["pass"]:
                    o(line)

    def extract_lines(self, t: T.HeaderType, h: str, end: str) -> list[str]:
        """Statements extracting fixed-size header ``h`` from ``d`` at byte offset ``o``:
        one bounds check, one ``int.from_bytes`` over the whole header, shifts and masks per
        field. They leave the end offset in ``end`` and ``o`` unchanged (the parser inlines
        them; the class's ``ext`` method wraps them)."""
        widths = _leaf_fields(t)
        total = sum(w for _, w, _ in widths)
        nbytes = (total + 7) // 8
        pad = nbytes * 8 - total
        lines = [f"{end} = o + {nbytes}",
                 f"if {end} > len(d): raise ParserError({self.err['PacketTooShort']})"]
        if self.native:
            if self.bytes_kept(t):
                lines += [f"{h}.d_ = d", f"{h}.o_ = o"]
            return lines + self._bytewise_lines(t, h, end)
        if self.raw_kept(t):
            lines += [f"_v = from_bytes(d[o:{end}])", f"{h}.r_ = _v"]
        elif total:
            lines.append(f"_v = from_bytes(d[o:{end}])" + (f" >> {pad}" if pad else ""))
        shift = total
        for a, w, is_bool in widths:
            shift -= w
            expr = "_v" if shift == 0 else f"(_v >> {shift})"
            if shift + w < total:
                expr = f"({expr} & {(1 << w) - 1})"
            lines.append(f"{h}.{a} = {'bool(' + expr + ')' if is_bool else expr}")
        lines.append(f"{h}.v_ = True")
        return lines

    def _bytewise_lines(self, t: T.HeaderType, h: str, end: str) -> list[str]:
        """The fields of ``h`` read from the frame's bytes (after the bounds check), each from
        the 4-, 2- and 1-byte words it spans (``word_read``): compiled by mypyc, a word read
        and shifts of values below 2**62 are machine operations, while shifting one int of the
        whole header (a 160-bit IPv4 header) is a big-int operation per field: 7,800 of a
        fabric.p4 packet's 12,300 parser instructions. CPython runs the one-int form faster
        (one call, then fewer bytecodes), so the Python backend keeps it. Fields of more than
        7 bytes go through ``from_bytes``."""
        lines: list[str] = []
        pos = 0
        for a, w, is_bool in _leaf_fields(t):
            first, last = pos // 8, (pos + w - 1) // 8
            right = 7 - (pos + w - 1) % 8  # bits after the field in its last byte
            pos += w
            if w == 0:
                lines.append(f"{h}.{a} = 0")
                continue
            if last - first < 7:
                expr = word_read(first, last - first + 1)
            else:
                expr = f"from_bytes(d[o + {first}:o + {last + 1}])"
            if right:
                expr = f"({expr}) >> {right}"
            if w < 8 * (last - first + 1) - right:
                expr = f"({expr}) & {(1 << w) - 1}"
            lines.append(f"{h}.{a} = {'bool(' + expr + ')' if is_bool else expr}")
        lines.append(f"{h}.v_ = True")
        return lines

    def emit_lines(self, t: T.HeaderType, h: str, out: str) -> list[str]:
        """Statements appending the wire bytes of fixed-size header ``h`` (a local or attribute
        chain) to the deparser's output ``out``: in Python, one int (``r_`` when the header was
        extracted, else packed from the fields) and one ``to_bytes`` appended to a list;
        compiled, the frame's slice it was extracted from (``d_``), or the fields in 32-bit
        words, written to a ``BytesWriter``."""
        widths = _leaf_fields(t)
        total = sum(w for _, w, _ in widths)
        nbytes = (total + 7) // 8
        if self.native:
            if not nbytes:
                return []
            vals = [(f"int({h}.{a})" if is_bool else f"{h}.{a}", w) for a, w, is_bool in widths]
            sizes = deparse_chunk_sizes(nbytes)
            packed = word_writes(out, bit_chunks(vals, sizes), sizes)
            if not self.bytes_kept(t):
                return packed
            return ([f"if {h}.d_ is not None: {out}.write({h}.d_[{h}.o_:{h}.o_ + {nbytes}])", "else:"]
                    + ["    " + line for line in packed])
        parts = []
        shift = total
        for a, w, is_bool in widths:
            shift -= w
            v = f"int({h}.{a})" if is_bool else f"{h}.{a}"
            parts.append(v if shift == 0 else f"({v} << {shift})")
        acc = " | ".join(parts) or "0"
        if nbytes * 8 > total:
            acc = f"(({acc}) << {nbytes * 8 - total})"
        if self.raw_kept(t):
            acc = f"{h}.r_ if {h}.r_ is not None else {acc}"
        return [f"{out}.append(({acc}).to_bytes({nbytes}))"]

    def out_type(self) -> str:
        """The annotation of a deparser's output (``packet_out``): the frame's chunks in a list
        (Python) or the ``BytesWriter`` the frame is written to (compiled)."""
        return "BytesWriter" if self.native else "list[bytes]"

    def _emit_varbit_header(self, t: T.HeaderType) -> None:
        """Headers with a varbit field: widths known only at extraction, so the shifts are
        computed per packet. The varbit value is stored as (nbits, value)."""
        o = self.out
        fixed = sum(scalar_width(f.type) or 0 for f in t.fields if not isinstance(f.type, T.VarbitType))
        vmax = sum(f.type.max_width for f in t.fields if isinstance(f.type, T.VarbitType))
        o("def ext(self, d, o, n):")
        with o.indent():
            # BMv2's order (bm_sim/parser.cpp extract_VL, as P4-16's extract pseudocode): a size
            # that is not whole bytes is ParserInvalidArgument, then PacketTooShort, then a size
            # beyond the varbit's maximum is HeaderTooShort
            o(f"if n % 8: raise ParserError({self.err['ParserInvalidArgument']})")
            o(f"total = {fixed} + n")
            o("nb = (total + 7) >> 3")
            o("e = o + nb")
            o(f"if e > len(d): raise ParserError({self.err['PacketTooShort']})")
            o(f"if n > {vmax} or n < 0: raise ParserError({self.err['HeaderTooShort']})")
            o("v = from_bytes(d[o:e]) >> (nb * 8 - total)")
            o("s = total")
            for f in t.fields:
                a = attr(f.name)
                if isinstance(f.type, T.VarbitType):
                    o("s -= n")
                    o(f"self.{a} = (n, (v >> s) & ((1 << n) - 1))")
                else:
                    w = scalar_width(f.type) or 0
                    o(f"s -= {w}")
                    cast = "bool" if isinstance(underlying(f.type), T.BoolType) else ""
                    o(f"self.{a} = {cast}((v >> s) & {(1 << w) - 1})")
            o("self.v_ = True")
            o("return e")
        o("def emit(self, out):")
        with o.indent():
            o("if self.v_:")
            with o.indent():
                o("acc = 0")
                o("n = 0")
                for f in t.fields:
                    a = attr(f.name)
                    if isinstance(f.type, T.VarbitType):
                        o(f"acc = (acc << self.{a}[0]) | self.{a}[1]")
                        o(f"n += self.{a}[0]")
                    else:
                        w = scalar_width(f.type) or 0
                        o(f"acc = (acc << {w}) | int(self.{a})")
                        o(f"n += {w}")
                o("p = (-n) % 8")
                o(f"out.{'write' if self.native else 'append'}((acc << p).to_bytes((n + p) >> 3))")


def _leaf_fields(t: T.StructLikeType, prefix: str = "") -> list[tuple[str, int, bool]]:
    """(attribute path, width, is bool) of every scalar field in wire order; struct-typed
    header fields (P4-16 1.2.2) contribute their own fields, in order."""
    out: list[tuple[str, int, bool]] = []
    for f in t.fields:
        ft = underlying(f.type)
        if isinstance(ft, T.StructType):
            out.extend(_leaf_fields(ft, f"{prefix}{attr(f.name)}."))
        else:
            out.append((prefix + attr(f.name), scalar_width(f.type) or 0, isinstance(ft, T.BoolType)))
    return out
