"""The virtual-time fabric: the switch device and the NIC model in one deterministic simulation.

One event queue in integer nanoseconds (``engine.Simulator``) drives the same
``p4switch.switch.device.Device`` as the live switch process (executor, traffic manager with
its priority queues and serializer, PFC reception and watchdog, replication) running the
compiled P4 program, and the same ``nicmodel.Nic`` as a live host, wired by a topology file.
The controller configures the switches through the P4Runtime service's own entity
translation, in process (``p4rt_conn.InProcessConnection``). Neither the switch nor the NIC
knows it is simulated: both only read the time they are given.

* ``engine.Simulator``: integer-nanosecond clock and event heap (ties in scheduling order).
* ``link.Link``: one direction of a wire (rate, delay, seeded loss/reorder/duplication/
  corruption, down/up).
* ``host.SimHost``: runs a ``Nic`` and its workload ``Endpoint`` on the virtual clock.
* ``switch_node.SwitchNode``: a p4switch ``Device`` on the virtual clock.
* ``fabric.P4Fabric``: a topology's switches, hosts and links, wired and ready.
* ``reference_switch`` / ``reference_fabric``: the fast reference switch model (not P4),
  kept for the NIC's transport tests.

The engine, links and nodes run compiled when built (``netbase.hotpath.DATA_PATH``: netbase,
imported first, installs its finder).
"""

import netbase  # noqa: F401 (before any of this package's modules)
