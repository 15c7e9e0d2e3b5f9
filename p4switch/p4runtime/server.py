"""Run the P4Runtime service on a gRPC server: ``serve(device, address)`` or, for embedding
(tests, the switch process), ``P4RuntimeServer(device, address).start()`` / ``.stop()``."""

from __future__ import annotations

import threading
from concurrent import futures
from typing import Any

import grpc
from p4.v1 import p4runtime_pb2

from p4switch.p4runtime.service import MAX_STREAMS, P4RuntimeService

TICK_S = 0.005  # digest timeouts and idle entries are checked this often (wall time) while any wait
IDLE_TICK_S = 1.0  # the timer's sleep while none do (woken early when one starts waiting)
MAX_MESSAGE = 64 * 1024 * 1024  # pipeline configs carry the whole program source
UNARY_WORKERS = 8  # threads that only unary RPCs can use, however many streams are open


class P4RuntimeServer:
    """Each open StreamChannel holds one gRPC worker thread for its lifetime, so the pool has
    ``max_streams`` workers for streams plus ``unary_workers`` that idle streams can never
    take: a controller's Write/Read is served however many clients hold streams open."""

    def __init__(self, device: Any, address: str = "127.0.0.1:9559", max_streams: int = MAX_STREAMS,
                 unary_workers: int = UNARY_WORKERS) -> None:
        if max_streams < 1 or unary_workers < 1:
            raise ValueError("the P4Runtime server needs at least one stream and one unary worker")
        self.service = P4RuntimeService(device, max_streams=max_streams)
        self.grpc = grpc.server(futures.ThreadPoolExecutor(max_workers=max_streams + unary_workers,
                                                           thread_name_prefix="p4rt"),
                                options=[("grpc.max_receive_message_length", MAX_MESSAGE),
                                         ("grpc.max_send_message_length", MAX_MESSAGE)])
        self.grpc.add_generic_rpc_handlers((_handlers(self.service),))
        self.port = self.grpc.add_insecure_port(address)
        if self.port == 0:
            raise OSError(f"cannot listen on {address}")
        self._stop = threading.Event()
        self._wake = threading.Event()
        self.service.wake = self._wake.set
        self._ticker = threading.Thread(target=self._tick, name="p4rt-tick", daemon=True)

    def start(self) -> "P4RuntimeServer":
        self.grpc.start()
        self._ticker.start()
        return self

    def _tick(self) -> None:
        """Every TICK_S while time-driven work waits; otherwise asleep until woken (a 5 ms tick
        on an idle switch cost 2 % of a core per switch, a Mininet fabric's worth of them more).
        Also ends when the grpc server is stopped directly (``serve()`` hands it out)."""
        busy = False
        while True:
            self._wake.wait(TICK_S if busy else IDLE_TICK_S)
            self._wake.clear()
            if self._stop.is_set() or not self.grpc.wait_for_termination(timeout=0):
                return
            busy = self.service.tick()

    def stop(self, grace: float | None = 0.5) -> None:
        self._stop.set()
        self._wake.set()
        self.grpc.stop(grace).wait()


def _handlers(service: P4RuntimeService) -> grpc.GenericRpcHandler:
    """The p4.v1.P4Runtime methods, with Write's and Read's requests and Read's responses
    left as bytes: the service cuts a Write into updates (a malformed one fails alone), finds
    the cells a poller's Read names and encodes the large Read answers itself (``p4rt/wire.py``)."""
    pb = p4runtime_pb2
    unary, stream = grpc.unary_unary_rpc_method_handler, grpc.unary_stream_rpc_method_handler
    return grpc.method_handlers_generic_handler("p4.v1.P4Runtime", {
        "Write": unary(service.Write, request_deserializer=None,
                       response_serializer=pb.WriteResponse.SerializeToString),
        "Read": stream(service.Read, request_deserializer=None, response_serializer=None),
        "SetForwardingPipelineConfig": unary(
            service.SetForwardingPipelineConfig,
            request_deserializer=pb.SetForwardingPipelineConfigRequest.FromString,
            response_serializer=pb.SetForwardingPipelineConfigResponse.SerializeToString),
        "GetForwardingPipelineConfig": unary(
            service.GetForwardingPipelineConfig,
            request_deserializer=pb.GetForwardingPipelineConfigRequest.FromString,
            response_serializer=pb.GetForwardingPipelineConfigResponse.SerializeToString),
        "StreamChannel": grpc.stream_stream_rpc_method_handler(
            service.StreamChannel, request_deserializer=pb.StreamMessageRequest.FromString,
            response_serializer=pb.StreamMessageResponse.SerializeToString),
        "Capabilities": unary(service.Capabilities, request_deserializer=pb.CapabilitiesRequest.FromString,
                              response_serializer=pb.CapabilitiesResponse.SerializeToString),
    })


def serve(device: Any, address: str) -> grpc.Server:
    """Start serving P4Runtime for ``device`` on ``address`` ("host:port"); returns the server."""
    return P4RuntimeServer(device, address).start().grpc
