"""`max.connections`: connections beyond the limit wait, in order, and a freed slot goes to the longest waiting."""

from __future__ import annotations

from broker.connection_slots import ConnectionSlots


def test_connections_beyond_the_limit_wait_for_a_freed_slot_in_order() -> None:
    admitted: list[str] = []
    slots = ConnectionSlots(2, admitted.append)
    assert [slots.request(name) for name in "abcd"] == [True, True, False, False]
    assert admitted == ["a", "b"] and slots.waiting == ["c", "d"]
    slots.leave("d", admitted=False)  # gave up while waiting: it never had a slot
    slots.leave("a", admitted=True)
    assert admitted == ["a", "b", "c"] and slots.waiting == []
    slots.leave("b", admitted=True)
    slots.leave("c", admitted=True)
    assert [slots.request(name) for name in "efg"] == [True, True, False]
