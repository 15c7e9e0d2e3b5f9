"""What a half of a queue pair asks its owner to do after an event.

The requester and the responder are state machines in the manner of h11: fed a packet or
the time, they change state and *return* what the outside must do, instead of calling into
their NIC. Frames are pulled (``next_data_frame`` / ``next_control_frame``) and timers are
read (``next_timer``), as h11's ``data_to_send``; the rest comes back as an ``Actions``.
"""

from __future__ import annotations

from nicmodel.verbs import Completion


class Actions:
    """``completions``: work completions to post to the completion queue, in order.
    ``control``: a control frame (ACK, NAK or CNP) is waiting to be sent.
    ``fatal``: the requester hit an unrecoverable error; the queue pair enters ERROR."""

    __slots__ = ("completions", "control", "fatal")

    def __init__(self) -> None:
        self.completions: list[Completion] = []
        self.control = False
        self.fatal = False
