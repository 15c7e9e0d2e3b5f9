"""The fabric's P4Runtime controller and operator CLI.

Modules by concern: ``switch_conn`` (one P4Runtime session), ``p4info`` (names <-> protobufs),
``intent`` (desired state and diffs), ``routing`` (routes from the topology), ``fabric_rules``
(fabric.p4's control-plane contract), ``settings``/``profiles`` (every knob, named profiles),
``controller`` (all switches and NICs), ``telemetry``, ``workloads``, ``results``, ``report``,
``state`` (the state file), ``session`` (attach to a running fabric), ``cli`` (``fabricctl``),
``run_demo`` (``make run``). ``packet_in`` (a switch's packet-ins to the controller's handler)
and ``int_reports`` (the INT collector's record of the reports) run compiled when built
(``netbase.hotpath.DATA_PATH``: netbase, imported first, installs its finder).
"""

import netbase  # noqa: F401 (before any of this package's modules)
