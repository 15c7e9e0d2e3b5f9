"""P4Runtime error statuses: one exception type for both ends of the protocol (a server raises
it to answer with a status, a client raises it when a call failed), the table-entry errors
mapped onto it, the batch error format (google.rpc.Status with one p4.v1.Error per update in
the details), and the error of names or values a P4Info does not have."""

from __future__ import annotations

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2

from p4rt import entries

Code = grpc.StatusCode


class P4RuntimeError(RuntimeError):
    """A request (or one update of a batch) fails with ``code``. ``details`` holds one line per
    failed update of a batch, as a client received them; ``str(e)`` is the message followed by
    those lines."""

    def __init__(self, code: grpc.StatusCode, message: str, details: list[str] | None = None) -> None:
        self.code = code
        self.details = details or []
        super().__init__("\n  ".join([message, *self.details]))


class P4InfoError(KeyError):
    """A name the loaded P4 program does not have, or a value that does not fit (found before
    anything is sent)."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0])


def invalid(message: str) -> P4RuntimeError:
    return P4RuntimeError(Code.INVALID_ARGUMENT, message)


_ENTRY_CODES: list[tuple[type, grpc.StatusCode]] = [
    (entries.InvalidEntryError, Code.INVALID_ARGUMENT),
    (entries.AlreadyExistsError, Code.ALREADY_EXISTS),
    (entries.NotFoundError, Code.NOT_FOUND),
    (entries.ResourceExhaustedError, Code.RESOURCE_EXHAUSTED),
]


def from_entry_error(e: entries.EntryError) -> P4RuntimeError:
    for cls, code in _ENTRY_CODES:
        if isinstance(e, cls):
            return P4RuntimeError(code, str(e))
    return P4RuntimeError(Code.INVALID_ARGUMENT, str(e))


def rpc_code(code: grpc.StatusCode) -> int:
    """grpc.StatusCode -> the google.rpc.Code number carried in protobuf messages."""
    return code.value[0]


def update_error(code: grpc.StatusCode, message: str = "") -> p4runtime_pb2.Error:
    err = p4runtime_pb2.Error(canonical_code=rpc_code(code), message=message)
    return err


MAX_DETAILS = 1024 * 1024  # bytes of per-update errors in a Write's trailers (clients allow 4 MiB)


def batch_status(errors: list[p4runtime_pb2.Error], message: str) -> status_pb2.Status:
    """Top-level status of a Write with failed updates: UNKNOWN, one detail per update
    (OK for the ones that succeeded), as the P4Runtime spec requires. Should the messages
    add up to more than ``MAX_DETAILS``, each is shortened so that every update keeps its
    code and the start of its message within that size."""
    total = sum(len(e.message) for e in errors)
    if total > MAX_DETAILS:
        keep = max(16, MAX_DETAILS // len(errors) - 32)
        errors = [p4runtime_pb2.Error(canonical_code=e.canonical_code, message=_shorten(e.message, keep))
                  for e in errors]
    status = status_pb2.Status(code=code_pb2.UNKNOWN, message=message)
    for err in errors:
        detail = any_pb2.Any()
        detail.Pack(err)
        status.details.append(detail)
    return status


def _shorten(message: str, keep: int) -> str:
    return message if len(message) <= keep else message[:keep - 3] + "..."


DETAILS_KEY = "grpc-status-details-bin"
