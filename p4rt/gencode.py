"""Regenerate the installed ``p4runtime`` package's ``*_pb2`` modules for protobuf's upb backend.

Every ``p4runtime`` release on the package registry (1.4.1 up to 1.6.0) ships Python code that
builds its descriptors one by one (``_descriptor.FieldDescriptor(...)``); protobuf 4.21 and later
refuse that with its C (upb) backend, so the project was stuck on protobuf 3.20 in pure Python.
Each of those modules still carries its ``.proto`` file as a serialized ``FileDescriptorProto``.
This step reads those bytes (without importing the old modules), hands them to the ``protoc``
of ``grpcio-tools`` (``--descriptor_set_in``) and writes its output over the old modules, so the
code is exactly what protoc generates for the installed protobuf and nothing is written by hand.
The ``*_pb2_grpc`` stubs hold no descriptors and stay as installed.

Run once after ``pip install`` (``make setup`` does): ``python -m p4rt.gencode``. It is
idempotent: modules already in the new form are left alone.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import tempfile
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool
from google.rpc import status_pb2
from grpc_tools import protoc

# Files the p4runtime modules import from other packages (protobuf itself, googleapis-common-protos).
_EXTERNAL_DEPS = (status_pb2.DESCRIPTOR,)


def _package_dir() -> Path:
    spec = importlib.util.find_spec("p4")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("p4rt.gencode: the p4runtime package (module 'p4') is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def serialized_file(module: Path) -> bytes | None:
    """The ``FileDescriptorProto`` bytes of an old-form generated module, or None if it is new-form."""
    tree = ast.parse(module.read_text(), str(module))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "FileDescriptor":
            for kw in node.keywords:
                if kw.arg == "serialized_pb":
                    return ast.literal_eval(kw.value)
    return None


def _with_deps(fd: descriptor_pb2.FileDescriptorProto, into: dict[str, descriptor_pb2.FileDescriptorProto]) -> None:
    """Add the descriptors of protobuf's own files that ``fd`` imports (any.proto, ...)."""
    pool = descriptor_pool.Default()
    for dep in fd.dependency:
        if dep not in into and not dep.startswith("p4/"):
            proto = descriptor_pb2.FileDescriptorProto()
            pool.FindFileByName(dep).CopyToProto(proto)
            into[dep] = proto
            _with_deps(proto, into)


def regenerate(package: Path) -> list[Path]:
    """Rewrite the old-form ``*_pb2.py`` under ``package``; returns the modules rewritten."""
    old: dict[Path, descriptor_pb2.FileDescriptorProto] = {}
    for module in sorted(package.rglob("*_pb2.py")):
        data = serialized_file(module)
        if data is not None:
            old[module] = descriptor_pb2.FileDescriptorProto.FromString(data)
    if not old:
        return []
    files: dict[str, descriptor_pb2.FileDescriptorProto] = {fd.name: fd for fd in old.values()}
    for dep in _EXTERNAL_DEPS:
        files.setdefault(dep.name, descriptor_pb2.FileDescriptorProto.FromString(dep.serialized_pb))
    for fd in list(files.values()):
        _with_deps(fd, files)
    with tempfile.TemporaryDirectory(prefix="p4rt-gencode-") as tmp:
        out = Path(tmp)
        dset = out / "set.pb"
        dset.write_bytes(descriptor_pb2.FileDescriptorSet(file=list(files.values())).SerializeToString())
        args = ["protoc", f"--descriptor_set_in={dset}", f"--python_out={out}"]
        if protoc.main(args + [fd.name for fd in old.values()]) != 0:
            raise SystemExit("p4rt.gencode: protoc failed on the p4runtime descriptors")
        for module, fd in old.items():
            generated = out / fd.name.replace(".proto", "_pb2.py")
            module.write_text(generated.read_text())
            for cached in module.parent.glob(f"__pycache__/{module.stem}.*.pyc"):
                cached.unlink()
    return list(old)


def main() -> None:
    done = regenerate(_package_dir())
    for module in done:
        print(f"regenerated {module}")
    if not done:
        print("p4runtime modules already generated for this protobuf", file=sys.stderr)


if __name__ == "__main__":
    main()
