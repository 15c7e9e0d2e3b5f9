"""Frames crafted per parser path: walk the V1Switch parser's states and select cases (from our
front end's checked AST) and build, for each path to ``accept`` or ``reject``, a frame whose
bytes steer the parser down that path.

A path is a list of (state, case) choices. Extracted headers take their place in the frame at
the parser's cursor (layouts from the header types); a select on a header field, a slice of
one, ``lookahead`` or ``standard_metadata.ingress_port`` is steered by fixing those bits (or
the ingress port) to a value that matches the chosen case and none before it; a select on
anything else (metadata computed in the parser, value sets) cannot be steered, so the path
is taken on trust (``ParserPath.steered`` False) and the frame is still sent. Values the parser
computes from frame bits (``meta.hops = (hdr.shim.len - 3) >> 3``) and ``verify`` conditions
are followed as functions of those bits and solved by search (values near the case's constant
first, then random ones). Every other bit is
random. Loops (header stacks, TLVs) are unrolled up to ``max_visits`` per state.

Why: random frames rarely get past an EtherType and a protocol number; these reach every
state, so both targets run every parser path and the controls behind it.
"""

from __future__ import annotations

import operator
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from p4switch.frontend import ast as A
from p4switch.frontend import types as T

MAX_PATHS = 256
STOP, REJECT = "stop", "reject"


@dataclass(frozen=True)
class Loc:
    """Bits ``[offset, offset + width)`` of the frame (bit 0 = the first bit on the wire)."""

    offset: int
    width: int


@dataclass(frozen=True)
class Sym:
    """A value the parser computes from frame bits (``meta.hops = (hdr.shim.len - 3) >> 3``, a
    ``verify`` condition): ``fn`` maps the values of ``locs`` to it."""

    locs: tuple[Loc, ...]
    fn: Callable[[dict[Loc, int]], int]


_BINARY: dict[str, Callable[[int, int], int]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "&": operator.and_, "|": operator.or_,
    "^": operator.xor, "<<": lambda a, b: a << min(b, 4096), ">>": operator.rshift, "==": operator.eq, "!=": operator.ne,
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "&&": lambda a, b: bool(a and b), "||": lambda a, b: bool(a or b),
}


@dataclass
class ParserPath:
    """One parser path and the frame built for it."""

    states: list[str]
    end: str  # "accept" or "reject"
    frame: bytes
    port: int
    steered: bool = True
    # extracted header fields of the frame: "ipv4.dstAddr" (parser parameter name left out) -> (value, width)
    fields: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return " -> ".join(self.states + [self.end])


class _Walk:
    """The state of one partial path: cursor, fixed bits, extracted headers."""

    def __init__(self) -> None:
        self.cursor = 0
        self.bits: dict[int, int] = {}
        self.headers: dict[str, tuple[int, T.HeaderType]] = {}  # path -> (offset, type)
        self.next_index: dict[str, int] = {}
        self.aliases: dict[str, Loc] = {}  # l-value path -> the frame bits it holds
        self.syms: dict[str, Sym] = {}  # l-value path -> what it was computed from
        self.conds: list[Sym] = []  # verify() conditions so far
        self.port: int | None = None
        self.states: list[str] = []
        self.steered = True

    def copy(self) -> _Walk:
        w = _Walk()
        w.cursor, w.bits, w.headers = self.cursor, dict(self.bits), dict(self.headers)
        w.next_index, w.aliases, w.port = dict(self.next_index), dict(self.aliases), self.port
        w.syms, w.conds = dict(self.syms), list(self.conds)
        w.states, w.steered = list(self.states), self.steered
        return w

    def fixed(self, loc: Loc) -> tuple[int, int]:
        """(value, mask) of the bits of ``loc`` already fixed."""
        v = m = 0
        for i in range(loc.width):
            b = self.bits.get(loc.offset + i)
            v <<= 1
            m <<= 1
            if b is not None:
                v |= b
                m |= 1
        return v, m

    def fix(self, loc: Loc, value: int) -> None:
        for i in range(loc.width):
            self.bits[loc.offset + i] = (value >> (loc.width - 1 - i)) & 1


def _path_of(e: A.Expression) -> str | None:
    """``hdr.ipv4`` / ``hdr.vlan[1]`` / ``meta.x`` for an l-value with constant indices."""
    if isinstance(e, A.NameRef):
        return e.name
    if isinstance(e, A.Member):
        base = _path_of(e.expr)
        return None if base is None else f"{base}.{e.name}"
    if isinstance(e, A.ArrayIndex) and isinstance(e.index.value, int):
        base = _path_of(e.expr)
        return None if base is None else f"{base}[{e.index.value}]"
    return None


def _const(e: A.Expression) -> int | None:
    v = getattr(e, "value", None)
    if isinstance(v, bool):
        return int(v)
    return v if isinstance(v, int) else None


class ParserPaths:
    """Paths through the ``parser`` stage of a checked V1Switch program."""

    def __init__(self, checked, rng: random.Random, ports: list[int], max_visits: int = 3,
                 max_paths: int = MAX_PATHS) -> None:
        self.decl: A.ParserDecl = checked.pipeline["parser"]
        self.states = {s.name: s for s in self.decl.states}
        params = self.decl.params
        self.sm_param = params[3].name if len(params) > 3 else None
        self.rng = rng
        self.ports = ports
        self.max_visits = max_visits
        self.max_paths = max_paths

    # ---- expressions ---------------------------------------------------------------------
    def _header_path(self, w: _Walk, e: A.Expression) -> str | None:
        if isinstance(e, A.Member) and e.name == "last":
            base = _path_of(e.expr)
            if base is None or not w.next_index.get(base):
                return None
            return f"{base}[{w.next_index[base] - 1}]"
        return _path_of(e)

    def _loc(self, w: _Walk, e: A.Expression) -> Loc | None:
        """Where in the frame the value of ``e`` comes from, if it is frame bits."""
        if isinstance(e, A.Cast) and e.type is not None and _width(e.type) == _width(e.expr.type):
            return self._loc(w, e.expr)
        if isinstance(e, A.Slice):
            inner = self._loc(w, e.expr)
            if inner is None:
                return None
            return Loc(inner.offset + inner.width - 1 - e.hi_value, e.hi_value - e.lo_value + 1)
        if isinstance(e, A.MethodCall) and e.method_name == "lookahead" and e.type is not None:
            width = _width(e.type)
            return Loc(w.cursor, width) if width else None
        path = _path_of(e)
        if path is not None and path in w.aliases:
            return w.aliases[path]
        if isinstance(e, A.Member):
            hp = self._header_path(w, e.expr)
            if hp is not None and hp in w.headers:
                off, ht = w.headers[hp]
                for f in ht.fields:
                    fw = _width(f.type)
                    if fw is None:
                        return None
                    if f.name == e.name:
                        return Loc(off, fw)
                    off += fw
        return None

    def _sym(self, w: _Walk, e: A.Expression) -> Sym | None:
        """``e`` as a function of frame bits, for the operators a parser computes with."""
        c = self._known(w, e)
        if c is not None:
            return Sym((), lambda env, c=c: c)
        loc = self._loc(w, e)
        if loc is not None:
            return Sym((loc,), lambda env, loc=loc: env[loc])
        path = _path_of(e)
        if path is not None and path in w.syms:
            return w.syms[path]
        width = _width(e.type)
        mask = (1 << width) - 1 if width else -1
        if isinstance(e, A.Cast):
            inner = self._sym(w, e.expr)
            return None if inner is None else Sym(inner.locs, lambda env, f=inner.fn: int(f(env)) & mask)
        if isinstance(e, A.Unary) and e.op in ("!", "~", "-"):
            inner = self._sym(w, e.expr)
            if inner is None:
                return None
            op = {"!": lambda v: int(not v), "~": lambda v: ~v & mask, "-": lambda v: -v & mask}[e.op]
            return Sym(inner.locs, lambda env, f=inner.fn: op(f(env)))
        if isinstance(e, A.Binary) and e.op in _BINARY:
            left, right = self._sym(w, e.left), self._sym(w, e.right)
            if left is None or right is None:
                return None
            op = _BINARY[e.op]
            return Sym(tuple(dict.fromkeys(left.locs + right.locs)),
                       lambda env, f=left.fn, g=right.fn: int(op(f(env), g(env))) & mask)
        return None

    def _sample(self, w: _Walk, sym: Sym, want: Callable[[int], bool],
                hint: int | None, near: bool = True) -> dict[Loc, int] | None:
        """Values of the frame bits ``sym`` reads (and the verify conditions on them) such that
        ``want(sym)`` holds and the conditions too; None if a search does not find any. Tries
        values near ``hint`` (the case's constant; else small values) first, then random ones."""
        locs = set(sym.locs)
        conds = [c for c in w.conds if locs & set(c.locs)]
        for c in conds:
            locs |= set(c.locs)
        order = sorted(locs, key=lambda loc: loc.offset)
        free = [loc for loc in order if w.fixed(loc)[1] != (1 << loc.width) - 1]
        # small values first without a hint: loops (hop counts, stack depths) stay short
        tries = [] if not near else list(range(17)) if hint is None else (
            [hint + d for d in range(-8, 9)] + [hint << k for k in range(1, 9)])
        for i in range(len(tries) + 256):
            env = {}
            for loc in order:
                fv, fm = w.fixed(loc)
                full = (1 << loc.width) - 1
                if loc in free and i < len(tries) and loc == free[0]:
                    guess = tries[i] & full
                else:
                    guess = self.rng.getrandbits(loc.width)
                env[loc] = (guess & ~fm & full) | fv
            if want(sym.fn(env)) and all(c.fn(env) for c in conds):
                return env
            if not free:
                return None  # nothing left to choose: the value is what it is
        return None

    def _known(self, w: _Walk, e: A.Expression) -> int | None:
        """A select key whose value the walk knows without the frame (constants, validity)."""
        c = _const(e)
        if c is not None:
            return c
        if isinstance(e, A.MethodCall) and e.method_name == "isValid" and isinstance(e.target, A.Member):
            hp = self._header_path(w, e.target.expr)
            return int(hp in w.headers) if hp is not None else None
        return None

    def _is_port(self, e: A.Expression) -> bool:
        return (isinstance(e, A.Member) and e.name == "ingress_port" and isinstance(e.expr, A.NameRef)
                and e.expr.name == self.sm_param)

    # ---- statements ------------------------------------------------------------------------
    def _statement(self, w: _Walk, s: A.Node) -> str | None:
        """Applies one statement: None to go on, STOP when the path cannot be followed
        further (a variable-size extract or advance), REJECT when the statement rejects (an
        extract past the end of a header stack)."""
        if isinstance(s, A.MethodCallStatement):
            c = s.call
            if c.method_name == "extract" and c.args:
                target = c.args[0].value
                ht = T.underlying(target.type)
                if len(c.args) > 1 or not isinstance(ht, T.HeaderType) or ht.has_varbit():
                    return STOP
                if isinstance(target, A.Member) and target.name == "next":
                    base = _path_of(target.expr)
                    stack = T.underlying(target.expr.type)
                    if base is None or not isinstance(stack, T.StackType):
                        return STOP
                    i = w.next_index.get(base, 0)
                    if i >= stack.size:
                        return REJECT
                    w.next_index[base] = i + 1
                    path = f"{base}[{i}]"
                else:
                    path = _path_of(target)
                if path is None:
                    return STOP
                w.headers[path] = (w.cursor, ht)
                w.cursor += ht.bit_width()
            elif c.method_name == "advance" and c.args:
                n = _const(c.args[0].value)
                if n is None:
                    return STOP
                w.cursor += n
            elif c.method_name == "verify" and c.args:
                cond = self._sym(w, c.args[0].value)
                if cond is not None:
                    w.conds.append(cond)
        elif isinstance(s, A.AssignmentStatement):
            loc = self._loc(w, s.rhs)
            sym = None if loc is not None else self._sym(w, s.rhs)
            lhs = _path_of(s.lhs)
            if lhs is not None:
                w.aliases.pop(lhs, None)
                w.syms.pop(lhs, None)
                if loc is not None:
                    w.aliases[lhs] = loc
                elif sym is not None:
                    w.syms[lhs] = sym
        elif isinstance(s, A.BlockStatement):
            return self._statements(w, s.statements)
        return None

    def _statements(self, w: _Walk, statements: list[A.Node]) -> str | None:
        for s in statements:
            if (stop := self._statement(w, s)) is not None:
                return stop
        return None

    # ---- select --------------------------------------------------------------------------
    def _choose(self, w: _Walk, keys: list[A.Expression], cases: list[A.SelectCase], pick: int) -> bool:
        """Fixes frame bits (or the port) so that case ``pick`` is the first to match."""
        elements = [_elements(c.keyset, len(keys)) for c in cases]
        # one key: the earlier cases' elements can be avoided while solving
        avoid = [e[0] for e in elements[:pick]] if len(keys) == 1 else []
        for attempt in range(16):
            trial = w.copy()
            values: list[int | None] = []
            ok = True
            for k, el in zip(keys, elements[pick]):
                v, good = self._value_for(trial, k, el, avoid, attempt)
                ok &= good
                values.append(v)
            if not ok:
                return False
            if not any(_matches(values, elements[i]) for i in range(pick)):
                w.__dict__.update(trial.__dict__)
                return True
        return False

    def _value_for(self, w: _Walk, key: A.Expression, el: A.Expression, avoid: list[A.Expression],
                   attempt: int) -> tuple[int | None, bool]:
        """A value of ``key`` matching keyset element ``el`` (and, where it is solved for, none
        of ``avoid``), fixed in the walk; (value, False) when the key is known and does not
        match."""
        width = _width(key.type) or 32
        full = (1 << width) - 1
        known = self._known(w, key)
        if known is not None:
            return known, _element_matches(known, el) is not False
        if self._is_port(key):
            want = _pick(self.rng, el, width)
            if want is None:
                want = self.rng.choice(self.ports)
            if w.port is not None and w.port != want:
                return w.port, _element_matches(w.port, el) is not False
            w.port = want
            return want, True
        loc = self._loc(w, key)
        if loc is None:
            sym = self._sym(w, key)
            env = None
            if sym is not None and sym.locs:
                def want(v: int) -> bool:
                    v &= full
                    return _element_matches(v, el) is not False and not any(_element_matches(v, a) for a in avoid)

                env = self._sample(w, sym, want, _pick(self.rng, el, width), near=attempt == 0)
            if env is None:
                if sym is not None and all(w.fixed(x)[1] == (1 << x.width) - 1 for x in sym.locs):
                    v = sym.fn({x: w.fixed(x)[0] for x in sym.locs}) & full
                    return v, _element_matches(v, el) is not False  # determined by bits fixed before
                w.steered = False
                return None, True
            for x, v in env.items():
                w.fix(x, v)
            return sym.fn(env) & full, True
        fv, fm = w.fixed(loc)
        want = _pick(self.rng, el, width)
        if want is None:  # default / don't care / value set: anything
            want = self.rng.getrandbits(width)
        value = (want & ~fm & full) | fv
        if _element_matches(value, el) is False:
            return value, False
        w.fix(loc, value)
        return value, True

    # ---- paths -----------------------------------------------------------------------------
    def paths(self) -> list[ParserPath]:
        out: list[ParserPath] = []
        stack: list[tuple[_Walk, str]] = [(_Walk(), "start")]
        while stack and len(out) < self.max_paths:
            w, name = stack.pop()
            if name in ("accept", "reject"):
                out.append(self._finish(w, name))
                continue
            state = self.states.get(name)
            if state is None:
                continue
            if w.states.count(name) >= self.max_visits:  # a longer loop: the frame goes as it is
                w.steered = False
                out.append(self._finish(w, "accept"))
                continue
            w.states.append(name)
            stop = self._statements(w, state.statements)
            if stop == REJECT:
                out.append(self._finish(w, "reject"))
                continue
            if stop == STOP:
                w.steered = False  # a variable-size part: the rest is random bytes
                out.append(self._finish(w, "accept"))
                continue
            tr = state.transition.target if state.transition is not None else None
            if tr is None:
                stack.append((w, "reject"))
            elif isinstance(tr, A.NameRef):
                stack.append((w, tr.name))
            elif isinstance(tr, A.SelectExpression):
                for i in reversed(range(len(tr.cases))):
                    branch = w.copy()
                    if self._choose(branch, tr.exprs, tr.cases, i):
                        stack.append((branch, tr.cases[i].state.name))
                if not any(isinstance(c.keyset, (A.DefaultExpr, A.DontCare)) for c in tr.cases):
                    branch = w.copy()  # no case matches: reject (NoMatch)
                    fake = A.SelectCase(A.DefaultExpr(), A.NameRef(name="reject"))
                    if self._choose(branch, tr.exprs, tr.cases + [fake], len(tr.cases)):
                        stack.append((branch, "reject"))
        return out

    def _finish(self, w: _Walk, end: str) -> ParserPath:
        for cond in w.conds:
            env = self._sample(w, cond, bool, None)
            if env is None:
                w.steered = False
            else:
                for x, v in env.items():
                    w.fix(x, v)
        nbits = max([w.cursor] + [b + 1 for b in w.bits])
        nbytes = (nbits + 7) // 8
        value = self.rng.getrandbits(nbytes * 8) if nbytes else 0
        for b, v in w.bits.items():
            shift = nbytes * 8 - 1 - b
            value = (value & ~(1 << shift)) | (v << shift)
        frame = value.to_bytes(nbytes, "big") + self.rng.randbytes(self.rng.randint(0, 16))
        port = w.port if w.port is not None else self.rng.choice(self.ports)
        fields: dict[str, tuple[int, int]] = {}
        for hp, (off, ht) in w.headers.items():
            rel = hp.split(".", 1)[1] if "." in hp else hp
            for f in ht.fields:
                fw = _width(f.type) or 0
                if off + fw <= nbytes * 8:
                    fields[f"{rel}.{f.name}"] = ((value >> (nbytes * 8 - off - fw)) & ((1 << fw) - 1), fw)
                off += fw
        return ParserPath(list(w.states), end, frame, port, w.steered, fields)


def _width(t) -> int | None:
    t = T.underlying(t) if t is not None else None
    if isinstance(t, (T.BitsType, T.BoolType, T.HeaderType, T.StructType)):
        try:
            return t.bit_width()
        except Exception:  # a struct with a field that has no fixed width
            return None
    return None


def _elements(keyset: A.Expression, n: int) -> list[A.Expression]:
    if isinstance(keyset, A.ListExpression) and n > 1:
        return list(keyset.items)
    if n > 1 and isinstance(keyset, (A.DefaultExpr, A.DontCare)):
        return [keyset] * n
    return [keyset]


def _pick(rng: random.Random, el: A.Expression, width: int) -> int | None:
    """A value matching one keyset element, or None when any value will do (or none can be
    known: a value set)."""
    full = (1 << width) - 1
    if isinstance(el, A.Mask):
        v, m = _const(el.value_expr), _const(el.mask)
        if v is None or m is None:
            return None
        return (v & m) | (rng.getrandbits(width) & ~m & full)
    if isinstance(el, A.Range):
        lo, hi = _const(el.low), _const(el.high)
        return rng.randint(lo, hi) if lo is not None and hi is not None and lo <= hi else None
    return _const(el)


def _element_matches(value: int, el: A.Expression) -> bool | None:
    """Whether ``value`` matches one keyset element (None: cannot tell, a value set)."""
    if isinstance(el, (A.DefaultExpr, A.DontCare)):
        return True
    if isinstance(el, A.Mask):
        v, m = _const(el.value_expr), _const(el.mask)
        return None if v is None or m is None else (value & m) == (v & m)
    if isinstance(el, A.Range):
        lo, hi = _const(el.low), _const(el.high)
        return None if lo is None or hi is None else lo <= value <= hi
    c = _const(el)
    return None if c is None else value == c


def _matches(values: list[int | None], elements: list[A.Expression]) -> bool:
    """Whether the chosen key values surely match a case (unknown values: assume not)."""
    for v, el in zip(values, elements):
        if v is None:
            return False
        if _element_matches(v, el) is not True:
            return False
    return True
