"""Bringing things up for tests and demos: a switch target (ours or BMv2's simple_switch_grpc)
started the way simple_switch_grpc is and given its program (``targets``), uniquely named veth
pairs (``veth``), a P4Runtime client in test notation (``p4rt_client``) and the programs the
tests use (``basic_program``, ``programs/``).

Used by the PTF suites, the Mininet nodes in ``topo`` and the controller's demo. It speaks only
to processes and protocols (P4Runtime through ``p4rt``), so everything it starts can be either
target; it imports neither the controller nor our target's modules.
"""
