"""Digest lists: only configured digests are sent, batched by size or timeout, de-duplicated
until acknowledged or until the ack timeout passes."""

from p4.v1 import p4data_pb2, p4runtime_pb2

from p4switch.p4runtime.digests import DigestBatcher


class Clock:
    def __init__(self):
        self.t = 0

    def __call__(self):
        return self.t


def _data(mac: int) -> p4data_pb2.P4Data:
    d = p4data_pb2.P4Data()
    d.struct.members.add(bitstring=mac.to_bytes(6, "big"))
    return d


def _setup(max_list_size=1, max_timeout_ns=0, ack_timeout_ns=0):
    sent, clock = [], Clock()
    b = DigestBatcher(sent.append, clock)
    b.configure(7, p4runtime_pb2.DigestEntry.Config(max_list_size=max_list_size, max_timeout_ns=max_timeout_ns,
                                                    ack_timeout_ns=ack_timeout_ns))
    return b, sent, clock


def test_unconfigured_digest_is_dropped_and_counted():
    b, sent, _ = _setup()
    b.add(8, _data(1))
    assert sent == [] and b.dropped == 1


def test_list_size_one_sends_immediately_with_increasing_list_ids():
    b, sent, clock = _setup()
    clock.t = 1000
    b.add(7, _data(1))
    b.add(7, _data(2))
    assert [(d.digest_id, d.list_id, d.timestamp) for d in sent] == [(7, 1, 1000), (7, 2, 1000)]
    assert sent[1].data[0] == _data(2)


def test_the_timer_is_told_when_a_list_starts_waiting_and_while_one_does():
    """The server's timer sleeps while no list waits for its max_timeout: the batcher wakes
    it when a list starts waiting (not for a list sent at once, nor for a second item), and
    ``flush_due`` says whether one still waits."""
    woken: list[int] = []
    sent, clock = [], Clock()
    b = DigestBatcher(sent.append, clock, on_waiting=lambda: woken.append(clock.t))
    b.configure(7, p4runtime_pb2.DigestEntry.Config(max_list_size=2, max_timeout_ns=500))
    b.configure(8, p4runtime_pb2.DigestEntry.Config(max_list_size=1))
    b.add(8, _data(9))  # sent at once: nothing waits
    assert len(sent) == 1 and woken == [] and b.flush_due() is False
    clock.t = 10
    b.add(7, _data(1))
    b.add(7, _data(1))  # the same data again: already waiting
    assert woken == [10] and b.flush_due() is True
    clock.t = 510
    assert b.flush_due() is False and len(sent) == 2


def test_batching_by_size_and_by_timeout():
    b, sent, clock = _setup(max_list_size=3, max_timeout_ns=500)
    b.add(7, _data(1))
    b.add(7, _data(2))
    assert sent == []
    clock.t = 499
    b.flush_due()
    assert sent == []
    clock.t = 500
    b.flush_due()
    assert len(sent) == 1 and list(sent[0].data) == [_data(1), _data(2)]
    for mac in (3, 4, 5):
        b.add(7, _data(mac))
    assert len(sent) == 2 and len(sent[1].data) == 3


def test_same_data_is_held_back_until_ack_or_ack_timeout():
    b, sent, clock = _setup(ack_timeout_ns=1000)
    b.add(7, _data(1))
    b.add(7, _data(1))
    assert len(sent) == 1
    assert b.ack(7, sent[0].list_id)
    assert not b.ack(7, sent[0].list_id)  # already acknowledged
    b.add(7, _data(1))
    assert len(sent) == 2
    clock.t = 1000  # not acknowledged in time: may be sent again
    b.add(7, _data(1))
    assert len(sent) == 3


def test_zero_ack_timeout_never_holds_data_back():
    b, sent, _ = _setup(ack_timeout_ns=0)
    b.add(7, _data(1))
    b.add(7, _data(1))
    assert len(sent) == 2


def test_each_digest_keeps_its_own_ack_timeout():
    b, sent, clock = _setup(ack_timeout_ns=1000)
    b.configure(9, p4runtime_pb2.DigestEntry.Config(max_list_size=1, ack_timeout_ns=0))
    b.add(7, _data(1))
    clock.t = 10
    b.add(9, _data(2))  # digest 9 never holds data back; digest 7's list still waits for its ack
    b.add(7, _data(1))
    assert [d.digest_id for d in sent] == [7, 9]
