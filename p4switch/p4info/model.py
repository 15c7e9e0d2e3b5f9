"""What the control plane can see of a P4 program, as plain values.

The front end's AST is walked once (``collect.py``) into these records; ``build.py`` turns them
into a P4Info message. The split keeps the p4c-compatible layout and id rules testable without
a parser, and keeps AST details out of the P4Info code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p4.config.v1 import p4types_pb2


@dataclass
class Annotations:
    """Annotations as P4Info carries them: ``@name(body)`` strings (without @name/@id/@brief/
    @description), the ``@brief``/``@description`` documentation, and an ``@id`` if given."""

    texts: list[str] = field(default_factory=list)
    brief: str | None = None
    description: str | None = None
    at_id: int | None = None


@dataclass
class MatchFieldInfo:
    name: str
    bitwidth: int
    match_type: str  # "exact", "lpm", "ternary", "range", "optional" or an architecture kind
    notes: Annotations = field(default_factory=Annotations)
    type_name: str | None = None


@dataclass
class ParamInfo:
    name: str
    bitwidth: int
    notes: Annotations = field(default_factory=Annotations)
    type_name: str | None = None


@dataclass
class ActionInfo:
    name: str
    params: list[ParamInfo] = field(default_factory=list)
    notes: Annotations = field(default_factory=Annotations)


@dataclass
class ActionRefInfo:
    name: str
    notes: Annotations = field(default_factory=Annotations)


@dataclass
class TableInfo:
    name: str
    match_fields: list[MatchFieldInfo] = field(default_factory=list)
    action_refs: list[ActionRefInfo] = field(default_factory=list)
    const_default_action: str | None = None
    # The declared default action with its arguments as (value, bitwidth) per parameter.
    initial_default: tuple[str, list[tuple[int, int]]] | None = None
    size: int = 1024  # p4c's default when the table has no size property
    is_const: bool = False
    has_initial_entries: bool = False
    implementation: str | None = None  # action profile / selector instance name
    direct_counter: str | None = None
    direct_meter: str | None = None
    support_timeout: bool = False
    notes: Annotations = field(default_factory=Annotations)


@dataclass
class ActionProfileInfo:
    name: str
    with_selector: bool
    size: int
    tables: list[str] = field(default_factory=list)
    max_group_size: int = 0
    size_semantics: str | None = None  # selectors: "sum_of_weights" or "sum_of_members"
    max_member_weight: int = 0  # sum_of_members selectors only
    notes: Annotations = field(default_factory=Annotations)


@dataclass
class CounterlikeInfo:
    """A counter or meter; ``direct_table`` set for the direct ones."""

    name: str
    unit: str  # v1model enum member: packets, bytes, packets_and_bytes
    size: int = 0
    direct_table: str | None = None
    notes: Annotations = field(default_factory=Annotations)


@dataclass
class RegisterInfo:
    name: str
    size: int
    type_spec: p4types_pb2.P4DataTypeSpec
    notes: Annotations = field(default_factory=Annotations)


@dataclass
class DigestInfo:
    name: str
    type_spec: p4types_pb2.P4DataTypeSpec


@dataclass
class MetadataInfo:
    name: str
    bitwidth: int
    notes: Annotations = field(default_factory=Annotations)
    type_name: str | None = None


@dataclass
class ControllerHeaderInfo:
    """A header type with ``@controller_header("packet_in")``: ``name`` is the annotation's
    argument (the P4Info name), ``type_name`` the header type's control-plane name."""

    name: str
    type_name: str
    metadata: list[MetadataInfo] = field(default_factory=list)
    notes: Annotations = field(default_factory=Annotations)


@dataclass
class ValueSetInfo:
    name: str
    size: int
    match: list[MatchFieldInfo] = field(default_factory=list)
    notes: Annotations = field(default_factory=Annotations)


@dataclass
class ProgramInfo:
    """Everything, in the order p4c emits it (ingress objects before egress ones)."""

    tables: list[TableInfo] = field(default_factory=list)
    actions: list[ActionInfo] = field(default_factory=list)
    action_profiles: list[ActionProfileInfo] = field(default_factory=list)
    counters: list[CounterlikeInfo] = field(default_factory=list)
    direct_counters: list[CounterlikeInfo] = field(default_factory=list)
    meters: list[CounterlikeInfo] = field(default_factory=list)
    direct_meters: list[CounterlikeInfo] = field(default_factory=list)
    controller_headers: list[ControllerHeaderInfo] = field(default_factory=list)
    value_sets: list[ValueSetInfo] = field(default_factory=list)
    registers: list[RegisterInfo] = field(default_factory=list)
    digests: list[DigestInfo] = field(default_factory=list)
    type_info: p4types_pb2.P4TypeInfo = field(default_factory=p4types_pb2.P4TypeInfo)
    arch: str = "v1model"
    pkg_annotations: Annotations = field(default_factory=Annotations)
    pkg_fields: dict[str, str] = field(default_factory=dict)  # from @pkginfo(name=..., ...)
    platform_properties: dict[str, int] = field(default_factory=dict)  # from @platform_property(k=N)
    uses_externs: bool = False  # any extern instance, or extern function call in the controls
