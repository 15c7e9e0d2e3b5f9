"""Pieces every part of the fabric shares and none of them owns: fabric time (``clock``) and
the wire formats below the transport (``ethernet``: what a frame costs on the wire; ``ipv4``:
the header checksum; ``pfc``: MAC control pause frames) and the one packet-socket port that
puts the switch and the live NIC on a real interface (``packet_socket``). The switch, the NIC model
and the controller import these from here, so each is defined once (as scapy defines each layer once) and importing one does not
drag in another component. Nothing here imports from p4switch, nicmodel or controller.

The per-frame ones (``clock``, ``ethernet``, ``ipv4``, ``pfc``: a switch reads the clock and
looks for a pause frame on every frame) run compiled when built, with the switch's, the NIC
model's and the simulator's (``netbase.hotpath.DATA_PATH``, whose finder this installs).
"""

from netbase.hotpath import DATA_PATH

DATA_PATH.install()
