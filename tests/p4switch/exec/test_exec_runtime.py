"""Header stack operations as BMv2 performs them."""

from p4switch.exec.stack import Stack


class Hdr:
    """A stand-in for a generated header class: a value and the validity bit."""

    def __init__(self, x: int) -> None:
        self.x = x
        self.v_ = True


def test_push_front_shifts_up_and_brings_the_last_elements_back_invalid_in_front():
    s = Stack([Hdr(1), Hdr(2), Hdr(3), Hdr(4)], nxt=3)
    s.push_front(2)
    assert [(h.x, h.v_) for h in s.h] == [(3, False), (4, False), (1, True), (2, True)]
    assert s.nxt == 4
    s.push_front(9)  # more than the size: every element invalid
    assert [h.v_ for h in s.h] == [False] * 4 and len({id(h) for h in s.h}) == 4


def test_pop_front_shifts_down_and_brings_the_first_elements_back_invalid_at_the_end():
    s = Stack([Hdr(1), Hdr(2), Hdr(3), Hdr(4)], nxt=3)
    s.pop_front(1)
    assert [(h.x, h.v_) for h in s.h] == [(2, True), (3, True), (4, True), (1, False)]
    assert s.nxt == 2
    s.pop_front(0)
    assert [h.x for h in s.h] == [2, 3, 4, 1] and s.nxt == 2
