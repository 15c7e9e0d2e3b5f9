"""Base class of the PTF tests: a P4Runtime session per test plus the runtime CLI words.

Target-agnostic: tests talk to the switch only over P4Runtime (:mod:`lab.p4rt_client`) and
through the runtime-CLI words both targets share (``set_queue_rate``, ``mirroring_add``, ...),
sent as BMv2's Thrift calls (:mod:`p4rt.runtime_cli`), which both targets serve. Parameters come from
the harness through ``--test-params`` (``grpc_addr``, ``device_id``, ``p4info``, ``cpu_port``,
``thrift_port``, ``target``, ``ports``). Everything a test inserts is deleted in tearDown.
"""

from __future__ import annotations

import ptf
from ptf import testutils
from ptf.base_tests import BaseTest

from lab.p4rt_client import P4RuntimeClient
from p4rt.p4info import P4InfoIndex, load_p4info
from p4rt.runtime_cli import CliClient, CommandError


class P4RuntimeTest(BaseTest):
    def setUp(self) -> None:
        BaseTest.setUp(self)
        self.dataplane = ptf.dataplane_instance
        self.dataplane.flush()
        params = testutils.test_params_get()
        self.target: str = params.get("target", "ours")
        self.cpu_port: int = params["cpu_port"]
        self.thrift_port: int = params["thrift_port"]
        self.ports: list[int] = list(params["ports"])
        self.client = P4RuntimeClient(params["grpc_addr"], device_id=params["device_id"], election_id=1)
        self.client.p4info = P4InfoIndex(load_p4info(params["p4info"]))

    def tearDown(self) -> None:
        try:
            self.client.undo_all()
        finally:
            self.client.close()
            BaseTest.tearDown(self)

    def cli(self, *commands: str) -> str:
        """Run runtime-CLI commands (the words both targets share); returns their output."""
        cli = CliClient(self.thrift_port)
        try:
            return "\n".join(cli.run(c) for c in commands)
        except CommandError as e:
            raise AssertionError(f"runtime CLI failed: {e}") from None
        finally:
            cli.close()
