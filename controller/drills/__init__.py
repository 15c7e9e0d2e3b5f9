"""Failure drills (``fabricctl drill``): a workload, a fault at a chosen time, and the fabric's
reaction before, during and after it (timeline.py: record, table, heat map; sim.py: the
virtual-time runs; cli.py: the command)."""
