"""``p4rt.gencode`` turns old-form generated modules (descriptors built one by one, which upb
refuses) into what protoc generates today, from the bytes the old module carries, and leaves
new-form modules alone; and the installed p4runtime package is in the new form on upb."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from google.protobuf import descriptor_pb2
from google.protobuf.internal import api_implementation
from p4.v1 import p4runtime_pb2

from p4rt import gencode


def _old_form_module(fd: descriptor_pb2.FileDescriptorProto) -> str:
    """The shape of a pre-3.20 protoc module, as p4runtime's wheels ship them (shortened: only
    the part that carries the file's descriptor)."""
    return ("from google.protobuf import descriptor as _descriptor\n"
            "DESCRIPTOR = _descriptor.FileDescriptor(\n"
            f"  name={fd.name!r},\n  package={fd.package!r},\n  syntax='proto3',\n"
            f"  serialized_pb={fd.SerializeToString()!r},\n"
            "  dependencies=[])\n"
            "_THING = _descriptor.Descriptor(name='Thing')  # upb refuses this line\n")


def test_old_form_module_is_regenerated_and_works(tmp_path: Path) -> None:
    fd = descriptor_pb2.FileDescriptorProto(name="gencodetest/v1/thing.proto", package="gencodetest.v1",
                                            syntax="proto3", dependency=["google/protobuf/any.proto"])
    msg = fd.message_type.add(name="Thing")
    msg.field.add(name="id", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_UINT32,
                  label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    msg.field.add(name="extra", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
                  type_name=".google.protobuf.Any", label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    package = tmp_path / "gencodetest"
    (package / "v1").mkdir(parents=True)
    for init in (package / "__init__.py", package / "v1" / "__init__.py"):
        init.write_text("")
    module = package / "v1" / "thing_pb2.py"
    module.write_text(_old_form_module(fd))

    assert gencode.serialized_file(module) == fd.SerializeToString()
    assert gencode.regenerate(package) == [module]
    assert gencode.serialized_file(module) is None  # new form now
    assert gencode.regenerate(package) == []  # idempotent

    sys.path.insert(0, str(tmp_path))
    try:
        thing_pb2 = importlib.import_module("gencodetest.v1.thing_pb2")
    finally:
        sys.path.remove(str(tmp_path))
    thing = thing_pb2.Thing(id=7)
    thing.extra.type_url = "x"
    assert thing_pb2.Thing.FromString(thing.SerializeToString()) == thing


def test_installed_p4runtime_runs_on_upb() -> None:
    assert api_implementation.Type() == "upb"
    for module in Path(p4runtime_pb2.__file__).parent.parent.rglob("*_pb2.py"):
        assert gencode.serialized_file(module) is None, f"{module} is still in the old form"
