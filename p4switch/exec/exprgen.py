"""Expression code generation: P4 expressions -> Python expressions over masked ints,
plus flattening/packing of aggregates for hashes, checksums and digests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from p4switch.exec import hashes
from p4switch.exec.codegen import (
    Lines,
    attr,
    bit_chunks,
    is_aggregate,
    is_signed,
    raw_positions,
    scalar_width,
    underlying,
)
from p4switch.exec.compile_base import (
    Scope,
    UnsupportedError,
)
from p4switch.exec.externgen import register_read
from p4switch.frontend import ast as A
from p4switch.frontend import types as T


class ExprGen:
    """Expression half of the generator of one Python function (StmtGen adds statements)."""

    def __init__(self, pc: Any, scope: Scope, out: Lines, prefix: str,
                 outs: list[str], has_ret: bool = False) -> None:
        self.pc = pc
        self.scope = scope
        self.o = out
        self.prefix = prefix
        self.outs = outs
        self.has_ret = has_ret
        self.in_action = 0
        # per inlined action with a return: [return-flag variable, enclosing loops]; a return
        # inside a loop sets the flag and leaves each loop, then the action's own block
        self.action_returns: list[list] = []
        self.state_index = 0
        self.pre: list[str] = []
        # per inlined action being generated: its copy-outs, which an `exit` also performs
        self.exit_copy_outs: list[list[tuple[A.Expression, str]]] = []
        # id(ArrayIndex) -> temporary holding its index, read before the right-hand side
        self.fixed_index: dict[int, str] = {}

    def _flat_tuple(self, e: A.Expression) -> str:
        return "(" + "".join(f"{v}, " for v, _, _ in self.flatten(e)) + ")"

    def flatten(self, e: A.Expression, cond: str | None = None) -> list[tuple[str, str, str | None]]:
        """The bit-level fields of a hash/checksum/digest input: (value code, width code,
        validity condition or None). Fields of invalid headers are skipped (BMv2)."""
        t = underlying(e.type)
        if isinstance(e, A.ListExpression):
            out = []
            for it in e.items:
                out.extend(self.flatten(it, cond))
            return out
        if isinstance(e, A.StructExpression):
            out = []
            for f in e.fields:
                out.extend(self.flatten(f.value, cond))
            return out
        code = self.expr(e)
        if cond is None and isinstance(e, A.Member) and e.kind == "field" \
                and isinstance(underlying(e.expr.type), T.HeaderType):
            cond = f"{self.expr(e.expr)}.v_"  # BMv2 leaves out fields of invalid headers
        return self._flatten_code(code, t, cond, e)

    def _flatten_code(self, code: str, t: T.P4Type, cond: str | None, node: A.Node | None = None
                      ) -> list[tuple[str, str, str | None]]:
        if isinstance(t, T.HeaderType):
            c = f"{code}.v_" if cond is None else f"({cond} and {code}.v_)"
            out = []
            for f in t.fields:
                out.extend(self._flatten_code(f"{code}.{attr(f.name)}", underlying(f.type), c, node))
            return out
        if isinstance(t, (T.StructType, T.HeaderUnionType)):
            out = []
            for f in t.fields:
                out.extend(self._flatten_code(f"{code}.{attr(f.name)}", underlying(f.type), cond, node))
            return out
        if isinstance(t, T.StackType):
            out = []
            for i in range(t.size):
                out.extend(self._flatten_code(f"{code}.h[{i}]", underlying(t.elem), cond, node))
            return out
        if isinstance(t, T.TupleType):
            out = []
            for i, et in enumerate(t.elems):
                out.extend(self._flatten_code(f"{code}[{i}]", underlying(et), cond, node))
            return out
        if isinstance(t, T.VarbitType):
            return [(f"{code}[1]", f"{code}[0]", cond)]
        if isinstance(t, T.BoolType):
            return [(f"int({code})", "1", cond)]
        if isinstance(t, T.ErrorType):  # 32-bit codes in BMv2
            return [(code, "32", cond)]
        if isinstance(t, T.EnumType) and not isinstance(t, T.SerEnumType):
            # p4c's v1model mid end gives a plain enum's members 32-bit values in order
            return [(f"{tuple(t.members)!r}.index({code})", "32", cond)]
        w = scalar_width(t)
        if w is None:
            raise UnsupportedError(node, f"cannot use a value of type {t} as hash or checksum data")
        return [(code, str(w), cond)]

    def pack(self, e: A.Expression, payload: bool = False, int_algo: list | None = None,
             fields: list[tuple[str, str, str | None]] | None = None) -> str:
        """Code for the input buffer of a hash or checksum. With ``int_algo`` (csum16 only,
        no payload) it may return the packed int instead, setting ``int_algo[0]``. ``fields``:
        ``flatten(e)`` when the caller has it already (flattening again would emit the code of
        any expression with statements of its own twice)."""
        if fields is None:
            fields = self.flatten(e)
        conds = {c for _, _, c in fields}
        guard = None
        if len(conds) == 1 and all(w.isdigit() for _, w, _ in fields):
            guard = conds.pop()  # one header: pack statically when it is valid
            fields = [(v, w, None) for v, w, _ in fields]
        static = all(c is None and w.isdigit() for _, w, c in fields)
        if static:
            total = sum(int(w) for _, w, _ in fields)
            pad = (-total) % 8
            parts = []
            shift = total + pad
            for v, w, _ in fields:
                shift -= int(w)
                parts.append(v if shift == 0 else f"({v} << {shift})")
            acc = ' | '.join(parts) or '0'
            if int_algo is not None:  # the checksum reads the packed int directly
                extra = 8 if (total + pad) % 16 else 0
                int_algo[0] = True
                code = f"({acc})" if not extra else f"(({acc}) << 8)"
                if self.pc.types.native:  # the sum of its 16-bit words: equal modulo 65535
                    code = "(" + " + ".join(f"({w})" for w in bit_chunks([(v, int(w)) for v, w, _ in fields], 16)) + ")"
                raw = self._raw_csum_input(e, [int(w) for _, w, _ in fields], pad + extra)
                if raw is not None:
                    code = f"({raw[1]} if {raw[0]}.r_ is not None else {code})"
                if guard is not None:
                    code = f"({code} if {guard} else 0)"
                return code
            code = f"({acc}).to_bytes({(total + pad) // 8})"
        else:
            groups = []
            for v, w, c in fields:
                item = f"(({v}, {w}),)"
                groups.append(item if c is None else f"({item} if {c} else ())")
            code = f"pack_bits({' + '.join(groups) or '()'})"
        if guard is not None:
            code = f"({code} if {guard} else b'')"
        if payload:
            code = f"({code} + ctx.payload)"
        return code

    def _raw_csum_input(self, e: A.Expression, widths: list[int], low: int) -> tuple[str, str] | None:
        """(header code, int expression) standing in for the packed csum16 input when ``e``
        lists distinct fields of one ``raw_kept`` header: that header's ``r_`` with the other
        fields masked out. The ones' complement sum is the value
        modulo 65535 (2**16 = 1 there) and is 0 only for 0, so the two agree when every
        field sits at the same bit position modulo 16 in both ints (``low``: the bits below
        the last field in the packed one). None when the input has another shape."""
        items = e.items if isinstance(e, A.ListExpression) else (
            [f.value for f in e.fields] if isinstance(e, A.StructExpression) else [])
        if not items or not all(isinstance(x, A.Member) and x.kind == "field" for x in items):
            return None
        ht = underlying(items[0].expr.type)
        if not self.pc.types.raw_kept(ht):
            return None
        h = self.expr(items[0].expr)
        names = [attr(x.name) for x in items]
        if "(" in h or len(set(names)) != len(names) or any(self.expr(x.expr) != h for x in items):
            return None
        pos = raw_positions(ht)
        mask = 0
        shift = sum(widths) + low
        for name, w in zip(names, widths):
            shift -= w
            lo, width = pos[name]
            if width != w or (lo - shift) % 16:
                return None
            mask |= ((1 << w) - 1) << lo
        return h, f"({h}.r_ & {mask})"

    # ---- expressions -----------------------------------------------------------------------
    def literal(self, e: A.Expression) -> str | None:
        if not e.is_const or e.value is None:
            return None
        v = e.value
        t = underlying(e.type) if not isinstance(e.type, T.EnumType) else e.type
        if isinstance(t, T.BoolType):
            return "True" if v else "False"
        if isinstance(t, T.ErrorType):
            if isinstance(v, str):
                return str(self.pc.errors.get(v.split(".")[-1], 0))
            return str(int(v))
        if isinstance(t, T.EnumType):
            return repr(v.split(".")[-1] if isinstance(v, str) else v)
        if isinstance(t, T.BitsType):
            if isinstance(v, str):
                return None
            return str(int(v) & t.mask)
        if isinstance(t, T.IntType) and isinstance(v, int):
            return str(v)
        if isinstance(t, T.StringType):
            return repr(v)
        return None

    def expr(self, e: A.Expression) -> str:
        lit = self.literal(e)
        if lit is not None:
            return lit
        m = getattr(self, "e_" + type(e).__name__, None)
        if m is None:
            raise UnsupportedError(e, f"expression {type(e).__name__} is not supported")
        return m(e)

    def e_IntLiteral(self, e: A.IntLiteral) -> str:
        t = underlying(e.type)
        if isinstance(t, T.BitsType):
            return str(e.value & t.mask)
        return str(e.value)

    def e_BoolLiteral(self, e: A.BoolLiteral) -> str:
        return "True" if e.value else "False"

    def e_StringLiteral(self, e: A.StringLiteral) -> str:
        return repr(e.value)

    def e_NameRef(self, e: A.NameRef) -> str:
        d = e.decl
        n = self.scope.get(d)
        if n is not None:
            return n
        if isinstance(d, A.ConstDecl):
            t = underlying(d.type)
            v = d.value
            if isinstance(t, T.BitsType) and isinstance(v, int):
                return str(v & t.mask)
            if isinstance(v, bool):
                return repr(v)
            if isinstance(v, int):
                return str(v)
            if d.init is not None:  # a struct/header/tuple constant: a fresh value each use
                return self.expr(d.init)
        if isinstance(d, A.InstanceDecl) and id(d) in self.pc.objects:
            return self.pc.objects[id(d)]
        raise UnsupportedError(e, f"cannot evaluate {e.name} here")

    def e_Member(self, e: A.Member) -> str:
        k = e.kind
        if k == "apply_result":
            ai = self.deferred(self.table_apply, e.expr)
            if e.name == "hit":
                return self.last_hit
            if e.name == "miss":
                return f"(not {self.last_hit})"
            return ai
        if k == "stack":
            base = self.expr(e.expr)
            oob = self.pc.errors["StackOutOfBounds"]
            if e.name == "next":  # the parser extracts into it: typed, its fields are slots
                return self.typed_elem(f"{base}.next_elem({oob})", underlying(e.expr.type))
            if e.name == "last":
                return self.typed_elem(f"{base}.last_elem({oob})", underlying(e.expr.type))
            if e.name == "lastIndex":
                return f"(({base}.nxt - 1) & 0xffffffff)"
            if e.name == "size":
                return str(underlying(e.expr.type).size)
        if k in ("enum", "error"):
            v = e.value if e.value is not None else e.name
            if k == "error":
                return str(self.pc.errors.get(str(v).split(".")[-1], 0))
            t = underlying(e.type) if not isinstance(e.type, T.EnumType) else e.type
            if isinstance(t, T.BitsType):
                return str(int(v) & t.mask)
            return repr(str(v).split(".")[-1])
        bt = underlying(e.expr.type)
        if isinstance(bt, T.StackType) and e.name == "size":
            return str(bt.size)
        return f"{self.expr(e.expr)}.{attr(e.name)}"

    def e_ArrayIndex(self, e: A.ArrayIndex, typed: bool = True) -> str:
        """A tuple item or a stack element; compiled (and not an assignment's target: ``typed``
        False) a stack element is cast to its class, so its field accesses are slot accesses
        rather than attribute look-ups on an ``Any`` (a ``Stack`` is a runtime object)."""
        bt = underlying(e.expr.type)
        if isinstance(bt, T.TupleType):
            return f"{self.expr(e.expr)}[{self.expr(e.index)}]"
        if e.index.is_const and e.index.value is not None:
            code = f"{self.expr(e.expr)}.h[{int(e.index.value)}]"
        else:
            code = f"{self.expr(e.expr)}.at({self.fixed_index.get(id(e)) or self.expr(e.index)})"
        return self.typed_elem(code, bt) if typed else code

    def typed_elem(self, code: str, stack: T.StackType) -> str:
        """``code``, an element of ``stack``, cast to its class when compiled."""
        elem = underlying(stack.elem)
        if self.pc.types.native and isinstance(elem, T.StructLikeType):
            return f"cast({self.pc.types.cls(elem)}, {code})"
        return code

    def e_Slice(self, e: A.Slice) -> str:
        w = e.hi_value - e.lo_value + 1
        v = self.expr(e.expr)
        if e.lo_value == 0:
            return f"({v} & {(1 << w) - 1})"
        return f"(({v} >> {e.lo_value}) & {(1 << w) - 1})"

    def e_Unary(self, e: A.Unary) -> str:
        v = self.expr(e.expr)
        t = underlying(e.type)
        if e.op == "!":
            return f"(not {v})"
        if e.op == "+":
            return v
        if isinstance(t, T.BitsType):
            if e.op == "~":
                return f"(~{v} & {t.mask})"
            if e.op == "-":
                return f"(-{v} & {t.mask})"
        return f"({e.op}{v})"

    def e_Binary(self, e: A.Binary) -> str:
        op = e.op
        a = self.expr(e.left)
        if op in ("&&", "||"):
            v, lines = self._captured(e.right)
            if not lines:
                return f"({a} {'and' if op == '&&' else 'or'} {v})"
            t = self.scope.tmp("sc")
            self.pre.append(f"{t} = {a}")
            self.pre.append(f"if {'' if op == '&&' else 'not '}{t}:")
            self.pre.extend("    " + x for x in lines)
            self.pre.append(f"    {t} = {v}")
            return t
        mark = len(self.pre)
        b = self.expr(e.right)
        codes = [a]
        self.keep_order(codes, [is_aggregate(underlying(e.left.type))], mark)
        a = codes[0]
        lt = underlying(e.left.type)
        t = underlying(e.type)
        if op == "++":
            rw = scalar_width(e.right.type)
            lv = f"int({a})" if isinstance(lt, T.BoolType) else a
            rv = f"int({b})" if isinstance(underlying(e.right.type), T.BoolType) else b
            return f"(({lv} << {rw}) | {rv})"
        if op in ("==", "!="):
            return f"({a} {op} {b})"
        if op in ("<", "<=", ">", ">="):
            if is_signed(lt):
                w = lt.width
                return f"(_s({a}, {w}) {op} _s({b}, {w}))"
            return f"({a} {op} {b})"
        if not isinstance(t, T.BitsType):
            py = {"/": "//"}.get(op, op)
            return f"({a} {py} {b})"
        w, m, sg = t.width, t.mask, t.signed
        if op in ("+", "-", "*"):
            return f"(({a} {op} {b}) & {m})"
        if op in ("&", "|", "^"):
            return f"({a} {op} {b})"
        if op == "|+|":
            return f"sat_add_s({a}, {b}, {w})" if sg else f"min({a} + {b}, {m})"
        if op == "|-|":
            return f"sat_sub_s({a}, {b}, {w})" if sg else f"max({a} - {b}, 0)"
        if op == "/":
            return f"div_s({a}, {b}, {w})" if sg else f"({a} // {b})"
        if op == "%":
            return f"mod_s({a}, {b}, {w})" if sg else f"({a} % {b})"
        if op == "<<":
            if e.right.is_const and e.right.value is not None:
                sh = int(e.right.value)
                return "0" if sh >= w else f"(({a} << {sh}) & {m})"
            return f"(({a} << {b}) & {m} if {b} < {w} else 0)"
        if op == ">>":
            if sg:
                return f"shr_s({a}, {b}, {w})"
            return f"({a} >> {b})"
        raise UnsupportedError(e, f"operator {op} is not supported")

    def deferred(self, gen: Callable, *args: Any) -> Any:
        """Run a statement generator inside an expression: the statements it emits become
        pending (``pre``) instead of being written out, so that ``keep_order`` can still read
        operands evaluated before it ahead of them. Returns what ``gen`` returns."""
        saved_o, saved_pre = self.o, self.pre
        self.o, self.pre = Lines(), []
        try:
            result = gen(*args)
            self.flush()
            lines = self.o.lines
        finally:
            self.o, self.pre = saved_o, saved_pre
        self.pre.extend(lines)
        return result

    def _captured(self, e: A.Expression) -> tuple[str, list[str]]:
        """Evaluate ``e`` with its side-effect statements (table applies, calls with out
        arguments) captured instead of emitted: (value code, statement lines)."""
        saved_o, saved_pre = self.o, self.pre
        self.o, self.pre = Lines(), []
        try:
            v = self.expr(e)
            self.flush()
            return v, self.o.lines
        finally:
            self.o, self.pre = saved_o, saved_pre

    def _guarded(self, e: A.Expression, cond: str) -> str:
        """Right operand of && / || and branches of ?: run only when ``cond`` holds; with
        side effects they become statements under that condition."""
        v, lines = self._captured(e)
        if not lines:
            return v
        t = self.scope.tmp("g")
        self.pre.append(f"{t} = None")
        self.pre.append(f"if {cond}:")
        self.pre.extend("    " + x for x in lines)
        self.pre.append(f"    {t} = {v}")
        return t

    def e_Ternary(self, e: A.Ternary) -> str:
        c = self.scope.tmp("c")
        cond = self.expr(e.cond)
        self.pre.append(f"{c} = {cond}")
        a = self._guarded(e.then, c)
        b = self._guarded(e.else_, f"not {c}")
        return f"({a} if {c} else {b})"

    def e_Cast(self, e: A.Cast) -> str:
        t = underlying(e.type)
        st = underlying(e.expr.type)
        if isinstance(e.expr, A.ListExpression) and isinstance(t, T.StructLikeType):
            return self.construct(t, e.expr.items)
        if isinstance(e.expr, A.StructExpression) and isinstance(t, T.StructLikeType):
            return self.struct_expr(e.expr, t)
        v = self.expr(e.expr)
        if isinstance(t, T.BoolType):
            return v if isinstance(st, T.BoolType) else f"({v} != 0)"
        if isinstance(t, T.BitsType):
            if isinstance(st, T.BoolType):
                return f"int({v})"
            if isinstance(st, T.BitsType):
                if st.signed and t.width > st.width:
                    return f"(_s({v}, {st.width}) & {t.mask})"
                if t.width >= st.width:
                    return v
                return f"({v} & {t.mask})"
            return f"({v} & {t.mask})"
        return v

    def e_MethodCall(self, c: A.MethodCall) -> str:
        k = c.kind
        name = c.method_name
        args = [a.value for a in c.args]
        if k in ("header_method", "union_method"):
            target = c.target.expr
            if name == "isValid":
                if isinstance(underlying(target.type), T.HeaderUnionType):
                    return f"{self.expr(target)}.valid()"
                return f"{self.expr(target)}.v_"
            if name in ("minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes"):
                bits = underlying(target.type).bit_width()
                return str(bits if name.endswith("Bits") else (bits + 7) // 8)
        if k == "function":
            return self.call_function(c, statement=False)
        if k == "table_apply":
            self.deferred(self.table_apply, c)
            return "None"
        if k == "packet_in" or (k == "extern_method" and self._target_extern(c) == "packet_in"):
            if name == "lookahead":
                t = underlying(c.type)
                if isinstance(t, T.HeaderType):
                    h = self.scope.tmp("la")
                    self.pre.append(f"{h} = {self.pc.types.cls(t)}()")
                    self.pre.append(f"{h}.ext(d, o)")
                    return h
                w = t.bit_width() if isinstance(t, T.StructType) else scalar_width(t) or 0
                nb = (w + 7) // 8
                short = self.pc.errors["PacketTooShort"]
                self.pre.append(f"if o + {nb} > len(d): raise ParserError({short})")
                v = f"(from_bytes(d[o:o + {nb}]) >> {nb * 8 - w})"
                if isinstance(t, T.StructType):
                    bits = self.scope.tmp("la")
                    self.pre.append(f"{bits} = {v}")
                    return self.unpack(c, t, bits, w)
                return f"({v} != 0)" if isinstance(t, T.BoolType) else v
            if name == "length":
                return "len(d)"
        if k == "extern_method":
            inst = c.target.expr.decl
            obj = self.pc.objects.get(id(inst))
            if inst.type.name == "register" and name == "read":
                return register_read(self, obj, self.expr(args[0]))
            if inst.type.name == "Checksum16" and name == "get":
                self.pc.ns["H_csum16"] = hashes.csum16
                return f"(H_csum16({self.pack(args[0])}))"
        if k == "extern_function" and name in ("hash",):
            raise UnsupportedError(c, "hash() has no value")
        if k in ("extern_method", "extern_function"):
            self.deferred(self.call_stmt, c)
            return "None"
        raise UnsupportedError(c, f"call {name} is not supported here")

    def unpack(self, c: A.MethodCall, t: T.StructType, bits: str, end: int) -> str:
        """A struct of bit fields whose wire bits end ``end`` bits into the int ``bits``
        (``lookahead<S>()``): the value built field by field, most significant first."""
        codes = []
        for f in t.fields:
            ft = underlying(f.type)
            if isinstance(ft, T.StructType):
                codes.append(self.unpack(c, ft, bits, end))
                end -= ft.bit_width()
                continue
            w = scalar_width(f.type)
            if w is None:
                raise UnsupportedError(c, f"lookahead of a struct with a {f.type} field is not supported")
            end -= w
            v = f"(({bits} >> {end}) & {(1 << w) - 1})"
            codes.append(f"({v} != 0)" if isinstance(ft, T.BoolType) else v)
        return f"{self.pc.types.cls(t)}.mk({', '.join(codes)})"

    def e_ListExpression(self, e: A.ListExpression) -> str:
        t = underlying(e.type)
        if isinstance(t, T.StructLikeType):
            return self.construct(t, e.items)
        return "(" + "".join(c + ", " for c in self.operands(e.items, copy=True)) + ")"

    def e_StructExpression(self, e: A.StructExpression) -> str:
        t = underlying(e.type)
        if isinstance(t, T.StructLikeType):
            return self.struct_expr(e, t)
        return "(" + "".join(c + ", " for c in self.operands([f.value for f in e.fields], copy=True)) + ")"

    def struct_expr(self, e: A.StructExpression, t: T.StructLikeType) -> str:
        by_name = {f.name: f.value for f in e.fields}
        items = [by_name.get(f.name) for f in t.fields]
        return self.construct(t, items)

    def construct(self, t: T.StructLikeType, items: list) -> str:
        cls = self.pc.types.cls(t)
        codes: list[str] = []
        for f, it in zip(t.fields, items):
            ft = underlying(f.type)
            mark = len(self.pre)
            if it is None:
                c = self.pc.types.default(f.type)
            elif isinstance(it, A.ListExpression) and isinstance(ft, T.StructLikeType):
                c = self.construct(ft, it.items)
            elif isinstance(it, A.StructExpression) and isinstance(ft, T.StructLikeType):
                c = self.struct_expr(it, ft)
            else:
                c = self.rvalue_copy(it)
            self.keep_order(codes, [False] * len(codes), mark)
            codes.append(c)
        return f"{cls}.mk({', '.join(codes)})"

    def e_InvalidHeader(self, e: A.InvalidHeader) -> str:
        return self.pc.types.default(e.type)

    def e_DontCare(self, e: A.DontCare) -> str:
        """``_`` as an argument (``extract<H>(_)``): a fresh value of its type, then dropped."""
        t = getattr(e, "type", None)
        return self.pc.types.default(t) if t is not None else "None"

    def e_TypeExpression(self, e: A.TypeExpression) -> str:
        return "None"
