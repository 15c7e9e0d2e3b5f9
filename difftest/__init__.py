"""Differential testing of our v1model target against the reference (p4c + BMv2): the same
table entries and packets through both, the first divergence printed as a ready STF test.

``p4switch-difftest PROG.p4 [-I DIR] [--entries TEST.stf] [--seed N] [--count N]`` (or
``python -m difftest``). It sits above both targets: it runs ours in process (``p4switch``)
and drives BMv2 through ``lab`` (``simple_switch`` with a nanomsg packet-in port, Thrift for
the control plane), which the target itself may not import.
"""
