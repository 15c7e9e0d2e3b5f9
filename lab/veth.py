"""Uniquely named veth pairs for switch tests, removed again even when a test fails.

Each pair has a switch end and a host end (where PTF or a test sends and captures). Names
carry the creating PID and a random suffix, so parallel runs on a shared machine never collide
and teardown deletes exactly what was created. IPv6 is disabled on both ends (no router
solicitations or MLD reports leaking into tests) and checksum/segmentation offloads are off
(a raw-socket switch would otherwise see frames with unfinished checksums).
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess


def _run(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True)


class VethPairs:
    def __init__(self, count: int, prefix: str = "v") -> None:
        tag = f"{prefix}{os.getpid() % 100000}{secrets.token_hex(2)}"
        if len(tag) + 3 > 15:
            raise ValueError(f"interface name prefix {prefix!r} too long")
        self.switch_side = [f"{tag}s{i}" for i in range(count)]
        self.host_side = [f"{tag}h{i}" for i in range(count)]
        self._created: list[str] = []

    def create(self) -> VethPairs:
        try:
            for sw, host in zip(self.switch_side, self.host_side):
                _run("ip", "link", "add", sw, "type", "veth", "peer", "name", host)
                self._created.append(sw)
                for name in (sw, host):
                    quiet(name)
        except Exception:
            self.delete()
            raise
        return self

    def delete(self) -> None:
        """Delete every pair created (deleting one end removes its peer)."""
        while self._created:
            subprocess.run(["ip", "link", "del", self._created.pop()], capture_output=True)

    def __enter__(self) -> VethPairs:
        return self.create()

    def __exit__(self, *exc: object) -> None:
        self.delete()


# ethtool -K arguments: no checksum or segmentation offloads, so a raw socket sees finished frames.
OFFLOADS_OFF = ("rx", "off", "tx", "off", "sg", "off", "tso", "off", "gso", "off", "gro", "off")


def quiet(ifname: str) -> None:
    """Bring an interface up without IPv6 chatter and without checksum/segmentation offloads."""
    subprocess.run(["sysctl", "-q", "-w", f"net.ipv6.conf.{ifname}.disable_ipv6=1"], capture_output=True)
    if shutil.which("ethtool"):
        subprocess.run(["ethtool", "-K", ifname, *OFFLOADS_OFF], capture_output=True)
    _run("ip", "link", "set", ifname, "up")
