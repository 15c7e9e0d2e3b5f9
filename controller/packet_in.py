"""A switch's packet-ins to the controller's handler of the moment.

Compiled with the data path (``netbase.hotpath.DATA_PATH``): a simulation's sinks send a
packet-in per INT report, and this is the way from the switch's stream to the collector.
"""

from __future__ import annotations

from typing import Any


class PacketInDispatch:
    """The packet-in handler of one switch's connection: each packet-in goes to the owner's
    ``on_packet_in(switch, packet_in)``, read per packet (telemetry may attach after the
    connections are made), or nowhere while it is None."""

    def __init__(self, switch: str, owner: Any) -> None:
        self.switch = switch
        self.owner = owner

    def __call__(self, packet: Any) -> None:
        handler = self.owner.on_packet_in
        if handler is not None:
            handler(self.switch, packet)
