"""Ctrl-C (or ``make run``'s SIGTERM) in the middle of a P4Runtime call: the call ends first
(its answer arrived), then the KeyboardInterrupt comes, and the session closes at once. Raised inside gRPC's own code,
the interrupt could leave a call the channel's close() waited for forever (`fabricctl
telemetry` interrupted while sampling hung). The server here sends the SIGINT itself while
it is answering, so the interrupt lands inside the call every time."""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
from p4.v1 import p4runtime_pb2

from p4rt import interrupts
from p4rt.switch_conn import SwitchConnection

ANSWER_DELAY_S = 0.3  # the server answers this long after sending the SIGINT


@pytest.fixture(params=[signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def sigint_server(request):
    """A P4Runtime server whose Read and Write interrupt this process (Ctrl-C, or the SIGTERM
    ``make run`` tears down on), then answer; yields (address, the calls answered). Both
    signals have Python's own handler meanwhile, as in a fresh ``fabricctl`` (SIGINT) and in
    ``make run`` (both), whatever an earlier test left."""
    answered: list[str] = []
    signum = request.param

    def interrupt_then(what: str) -> None:
        os.kill(os.getpid(), signum)
        time.sleep(ANSWER_DELAY_S)
        answered.append(what)

    def read(request, context):
        interrupt_then("Read")
        yield p4runtime_pb2.ReadResponse()

    def write(request, context):
        interrupt_then("Write")
        return p4runtime_pb2.WriteResponse()

    handlers = {
        "Read": grpc.unary_stream_rpc_method_handler(read, p4runtime_pb2.ReadRequest.FromString,
                                                     p4runtime_pb2.ReadResponse.SerializeToString),
        "Write": grpc.unary_unary_rpc_method_handler(write, p4runtime_pb2.WriteRequest.FromString,
                                                     p4runtime_pb2.WriteResponse.SerializeToString),
    }
    server = grpc.server(ThreadPoolExecutor(2))
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("p4.v1.P4Runtime", handlers)])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    before = {sig: signal.getsignal(sig) for sig in interrupts.HELD}
    for sig in interrupts.HELD:
        signal.signal(sig, signal.default_int_handler)
    try:
        yield f"127.0.0.1:{port}", answered
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        server.stop(0)


def _interrupted(call) -> float:
    """Seconds ``call`` took until its KeyboardInterrupt."""
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        call()
    return time.monotonic() - start


def _closes(conn: SwitchConnection) -> bool:
    """Does ``conn.close()`` return within 10 s? (Run aside: a hang must not hang the test.)"""
    closing = threading.Thread(target=conn.close, daemon=True)
    closing.start()
    closing.join(10)
    return not closing.is_alive()


def test_ctrl_c_during_a_read_comes_after_the_answer_and_close_returns(sigint_server) -> None:
    address, answered = sigint_server
    conn = SwitchConnection("s1", address, device_id=1)
    took = _interrupted(lambda: conn.read([]))
    assert answered == ["Read"] and took >= ANSWER_DELAY_S
    assert _closes(conn), "the channel's close() hung after an interrupted Read"


def test_ctrl_c_during_a_write_comes_after_the_answer_and_close_returns(sigint_server) -> None:
    address, answered = sigint_server
    conn = SwitchConnection("s1", address, device_id=1)
    took = _interrupted(lambda: conn.write([p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)]))
    assert answered == ["Write"] and took >= ANSWER_DELAY_S
    assert _closes(conn), "the channel's close() hung after an interrupted Write"


def test_outside_a_call_ctrl_c_interrupts_at_once(sigint_server) -> None:
    with interrupts.held():  # installs the handler, as the first call does
        pass
    assert signal.getsignal(signal.SIGINT) is interrupts._on_signal
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # interrupted long before


def test_a_program_s_own_sigint_handler_is_kept(sigint_server) -> None:
    caught: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    with interrupts.held():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.1)
        assert caught == [signal.SIGINT]  # delivered to it at once, not held back
    assert signal.getsignal(signal.SIGINT) is not interrupts._on_signal
