"""Virtual-time fabric for the NIC model: the same sans-IO ``Nic`` as in live mode, driven
event by event at true scale (100 Gb/s, microsecond timers) and deterministically.

* ``engine.Simulator``: integer-nanosecond clock and event heap.
* ``link.Link``: one direction of a wire (rate, delay, seeded loss/reorder/duplication).
* ``switch.Switch``: output-queued switch model (priority queues, RED ECN, INT source and
  transit, PFC generation and obedience, tail drop); a test fixture, not the P4 program.
* ``host.SimHost``: runs a ``Nic`` and its workload ``Endpoint`` on the virtual clock.
* ``fabric.SimFabric``: hosts and switches wired as a star or dumbbell; ``run(spec)``
  executes a workload (nicmodel.workloads) and returns its ``RunStats``.

    fabric = SimFabric(FabricConfig(hosts=3))
    stats = fabric.run({"kind": "incast", "size": 1 << 20, "dst": 2}, NicSettings(cc="hpcc"))
    print(stats.summary())
"""
