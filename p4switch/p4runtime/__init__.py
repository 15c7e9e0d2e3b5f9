"""P4Runtime gRPC server of the p4switch target (p4.v1.P4Runtime, API version 1.4.1).

    from p4switch.p4runtime import P4RuntimeServer, serve
    server = P4RuntimeServer(device, "127.0.0.1:9559").start()   # ... server.stop()

What a controller gets (module that implements it):

* Capabilities; Set/GetForwardingPipelineConfig with VERIFY, VERIFY_AND_SAVE, COMMIT,
  VERIFY_AND_COMMIT, RECONCILE_AND_COMMIT and every response type (``pipeline.py``);
* StreamChannel arbitration for the default role (``arbitration.py``), PacketOut/PacketIn
  through the ``@controller_header`` metadata (``packetio.py``), DigestList with acks
  (``digests.py``);
* Write/Read of table entries (every match kind, default entries, direct counters and
  meters, one-shot action sets in ``oneshot.py``), action profile members and groups,
  counters, meters, registers, multicast groups, clone sessions, digest entries and parser
  value sets of ``bit<W>``, with wildcard reads (``entities.py``, with the codec of ``p4rt.codec``).

Errors carry the statuses the P4Runtime spec names; a failed Write batch returns UNKNOWN with
one p4.v1.Error per update in ``grpc-status-details-bin``. SetForwardingPipelineConfig checks
the P4Info against the device config's program object by object (``p4info_check.py``).

Robustness and speed: at most ``MAX_STREAMS`` StreamChannels are open at once (more get
RESOURCE_EXHAUSTED) and unary RPCs have worker threads of their own (``server.py``); Write
updates are parsed by protobuf's C backend one by one, Read answers for table entries, counters
and registers are encoded straight to bytes (``p4rt/wire.py``); Writes and Reads take the device lock in short
stretches, so forwarding goes on during a long request (``python -m bench p4runtime``). Not supported (UNIMPLEMENTED):
roles other than the default one, value sets of structs, extern entries, ROLLBACK_ON_ERROR
and DATAPLANE_ATOMIC batches.

Idle timeout (tables with ``support_timeout = true``, P4Info NOTIFY_CONTROL): entries take an
``idle_timeout_ns``, Read fills ``time_since_last_hit`` when asked, and the server's periodic
scan (``idle.py``, every few ms of wall time, measured on the switch's fabric clock) sends
the primary one ``IdleTimeoutNotification`` per scan with every entry idle for its TTL; an
entry's timer restarts when it is reported (the spec's rule), so an entry that stays idle is
reported again once per TTL.
"""

from p4switch.p4runtime.server import P4RuntimeServer, serve

__all__ = ["P4RuntimeServer", "serve"]
