"""The Mininet integration: two hosts ping each other through our P4 switch node."""

from __future__ import annotations

import pytest

from topo import simple

pytestmark = pytest.mark.net  # Mininet, as root


def test_two_hosts_ping_through_the_p4_switch(tmp_path) -> None:
    net, client = simple.start("ours", tmp_path)
    try:
        h1, h2 = net.get("h1"), net.get("h2")
        out = h1.cmd(f"ping -c 3 -i 0.2 -W 3 {h2.IP()}")
        assert " 0% packet loss" in out, out
        sw = next(s for s in net.switches)
        assert sw.process is not None and sw.process.proc.poll() is None
        assert sw.switch_interfaces() == {1: f"{sw.name}-eth1", 2: f"{sw.name}-eth2"}
        # the TTL the receiver sees went down by one: the packets really crossed basic.p4
        assert "ttl=63" in out
    finally:
        client.close()
        net.stop()
