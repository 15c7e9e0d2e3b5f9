"""Type references to types: named types, widths, stacks, generic struct specializations,
type parameters and parameter lists.
"""

from __future__ import annotations

from p4switch.frontend import ast
from p4switch.frontend import types as T
from p4switch.frontend.errors import plural
from p4switch.frontend.typecheck.constfold import MAX_WIDTH


def _fixed_width_struct(t: T.P4Type) -> bool:
    """A struct of bit<>/int<>/bool/serializable enums (or such structs): allowed as a header
    field since P4-16 1.2.2."""
    return isinstance(t, T.StructType) and all(
        isinstance(T.underlying(f.type), (T.BitsType, T.BoolType))
        or _fixed_width_struct(T.underlying(f.type)) for f in t.fields)


class TypeRefs:
    """Resolving ``ast.TypeRef`` nodes to ``types.P4Type``."""

    def resolve_type(self, tr: ast.TypeRef) -> T.P4Type:
        t = self._resolve_type(tr)
        tr.type = t
        return t

    def _resolve_type(self, tr: ast.TypeRef) -> T.P4Type:
        if isinstance(tr, ast.BaseTypeRef):
            k = tr.kind
            if k == "bool":
                return T.BOOL
            if k == "error":
                return self.error_type
            if k == "string":
                return T.STRING
            if k == "void":
                return T.VOID
            if k == "match_kind":
                return self.match_kind_type
            if k == "int" and tr.width is None:
                return T.INT
            w = self.const_int(tr.width, "type width")
            if k == "varbit":
                if w <= 0:
                    raise self.err(tr, f"invalid varbit width {w}")
                return T.VarbitType(w)
            if w <= 0 or (k == "int" and w < 1):
                raise self.err(tr, f"invalid width {w} for {k}<>")
            if w > MAX_WIDTH:
                raise self.err(tr, f"{k}<{w}>: this implementation supports widths up to {MAX_WIDTH} bits")
            return T.BitsType(w, k == "int")
        if isinstance(tr, ast.NamedTypeRef):
            d = self.refs.decl(tr)
            tr.decl = d
            args = [self.resolve_type(a) for a in tr.type_args]
            if isinstance(d, ast.TypeParam):
                return self.type_args_in_scope.get(d, d.type)
            if isinstance(d, ast.StructLikeDecl) and d.type_params:
                return self.specialize_struct(d, args, tr)
            if isinstance(d, (ast.StructLikeDecl, ast.EnumDecl, ast.TypedefDecl)):
                if args:
                    raise self.err(tr, f"type '{tr.name}' takes no type arguments")
                return d.type
            if isinstance(d, ast.ExternDecl):
                et: T.ExternDeclType = d.type
                if args and len(args) != len(et.type_params):
                    raise self.err(tr, f"extern '{tr.name}' expects "
                                       f"{plural(len(et.type_params), 'type argument')}, got "
                                       f"{len(args)}")
                return T.ExternType(et, tuple(args) if args else tuple(et.type_params))
            if isinstance(d, (ast.ParserTypeDecl, ast.ControlTypeDecl, ast.PackageTypeDecl,
                              ast.ParserDecl, ast.ControlDecl)):
                bt: T.BlockType = d.type
                if args:
                    if len(args) != len(bt.type_params):
                        raise self.err(tr, f"'{tr.name}' expects {len(bt.type_params)} type "
                                           f"arguments, got {len(args)}")
                    return T.SpecializedType(bt, tuple(args))
                return bt
            raise self.err(tr, f"'{tr.name}' is not a type")
        if isinstance(tr, ast.StackTypeRef):
            elem = self.resolve_type(tr.elem)
            if not isinstance(elem, (T.HeaderType, T.HeaderUnionType)):
                raise self.err(tr, f"header stack elements must be headers, not {elem}")
            n = self.const_int(tr.size, "stack size")
            if n <= 0:
                raise self.err(tr.size, f"header stack size must be positive, not {n}")
            return T.StackType(elem, n)
        if isinstance(tr, ast.TupleTypeRef):
            return T.TupleType(tuple(self.resolve_type(e) for e in tr.elems))
        if isinstance(tr, ast.ListTypeRef):
            return T.ListType(self.resolve_type(tr.elem))
        if isinstance(tr, ast.DontCareTypeRef):
            return T.TypeVar("_")
        raise self.err(tr, "unsupported type")

    def declare_type_params(self, params: list[ast.TypeParam]) -> list[T.TypeVar]:
        for p in params:
            p.type = T.TypeVar(p.name)
        return [p.type for p in params]

    def make_params(self, params: list[ast.Parameter], blocks: bool = False) -> list[T.Param]:
        """The parameters' types; ``blocks``: parser and control types are allowed (only a
        package's parameters take parsers and controls, as p4c's checkParameters says)."""
        out = []
        for p in params:
            t = self.resolve_type(p.type_ref)
            p.type = t
            self.check_param_type(p, t, blocks)
            if p.default is not None and p.direction in ("out", "inout"):
                raise self.err(p, f"'{p.name}': {p.direction} parameters cannot have default values")
            default = None
            if p.default is not None:
                p.default = self.coerce(self.expr(p.default, t), t, "default value")
                if not p.default.is_const:
                    raise self.err(p.default, f"'{p.name}': a default value must be a "
                                              f"compile-time constant")
                default = p.default.value
            optional = p.annotation("optional") is not None
            out.append(T.Param(p.name, p.direction, t, default, p.default is not None, optional, p))
        return out

    def check_param_type(self, p: ast.Parameter, t: T.P4Type, blocks: bool) -> None:
        if p.direction is not None and (t in (T.STRING, T.INT) or isinstance(t, T.ExternType)):
            raise self.err(p, f"'{p.name}': a parameter of type {t} cannot have a direction")
        base = t.base if isinstance(t, T.SpecializedType) else t
        if isinstance(base, (T.ParserType, T.ControlType)) and (
                not blocks or p.direction is not None
                or isinstance(base.decl, (ast.ParserDecl, ast.ControlDecl))):
            kind = "parser" if isinstance(base, T.ParserType) else "control"
            raise self.err(p, f"'{p.name}': a parameter cannot have type {kind} {base.name}")

    def specialize_struct(self, d: ast.StructLikeDecl, args: list[T.P4Type],
                          tr: ast.TypeRef) -> T.P4Type:
        """The struct/header type ``d<args>``, made once per distinct argument list and named
        the way p4c names specializations (``H_0``, ``H_1``, ...)."""
        if len(args) != len(d.type_params):
            raise self.err(tr, f"'{d.name}' expects {plural(len(d.type_params), 'type argument')}, "
                               f"got {len(args)}")
        for a in args:
            if isinstance(a, T.TypeVar) and a.name == "_":
                raise self.err(tr, f"'_' cannot be a type argument of '{d.name}'")
        cls, made = self.generic_structs[d]
        key = tuple(args)
        if key not in made:
            t = made[key] = cls(f"{d.name}_{len(made)}", [], d)
            saved = self.type_args_in_scope
            self.type_args_in_scope = {**saved, **dict(zip(d.type_params, args))}
            try:
                self._struct_fields(d, t, cls)
            finally:
                self.type_args_in_scope = saved
        return made[key]

    def _struct_fields(self, d: ast.StructLikeDecl, t: T.StructLikeType,
                       cls: type) -> None:
        seen = set()
        for f in d.fields:
            if f.name in seen:
                raise self.err(f, f"duplicate field '{f.name}' in {d.name}")
            seen.add(f.name)
            ft = self.resolve_type(f.type_ref)
            if cls is T.HeaderType:
                base = T.underlying(ft)
                if not (isinstance(base, (T.BitsType, T.VarbitType, T.BoolType))
                        or _fixed_width_struct(base)):
                    raise self.err(f, f"header field '{f.name}' must be bit<>, int<>, varbit<>, "
                                      f"bool or a serializable enum, not {ft}")
            elif cls is T.HeaderUnionType and not isinstance(ft, T.HeaderType):
                raise self.err(f, f"header_union field '{f.name}' must be a header, not {ft}")
            elif ft in (T.STRING, T.INT):  # compile-time-only types (p4c: type-error)
                raise self.err(f, f"field '{f.name}' of {d.name} cannot have type {ft}")
            t.fields.append(T.Field(f.name, ft, f.annotations))
        if cls is T.HeaderType and sum(isinstance(f.type, T.VarbitType) for f in t.fields) > 1:
            raise self.err(d, f"header {d.name} has more than one varbit field")
