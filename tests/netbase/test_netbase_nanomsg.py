"""The nanomsg PAIR socket BMv2's packet-in port is driven with."""

from __future__ import annotations

import pytest

from netbase.nanomsg import NanomsgUnavailable, PairSocket


def test_messages_cross_a_pair_in_order_and_recv_times_out(tmp_path) -> None:
    address = f"ipc://{tmp_path}/pair.ipc"
    try:
        server = PairSocket(address, bind=True)
    except NanomsgUnavailable as e:
        pytest.skip(str(e))
    with server, PairSocket(address) as client:
        frames = [b"\x00" * 60, bytes(range(256)) * 6, b"x"]
        for f in frames:
            client.send(f)
        assert [server.recv(2.0) for _ in frames] == frames
        assert server.recv(0.05) is None
        server.send(b"back")
        assert client.recv(2.0) == b"back"
