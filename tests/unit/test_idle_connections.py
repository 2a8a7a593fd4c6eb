"""The idle-expiry bookkeeping alone, on a manual clock: least recently active first, held connections exempt."""

from __future__ import annotations

from broker.idle_connections import IdleConnections


class FakeConnection:
    def __init__(self, name: str, closed: list[tuple[str, int]]) -> None:
        self.name = name
        self._closed = closed

    def close_idle(self, idle_ms: int) -> None:
        self._closed.append((self.name, idle_ms))


def test_the_least_recently_active_expire_first_and_held_ones_never() -> None:
    now = [0]
    closed: list[tuple[str, int]] = []
    idle = IdleConnections(100, lambda: now[0])
    a, b, parked = (FakeConnection(n, closed) for n in ("a", "b", "parked"))
    for connection in (a, b, parked):
        idle.touch(connection)
    idle.hold(parked)  # its request is parked in the broker
    now[0] = 50
    idle.touch(a)  # a read: a's clock restarts
    assert idle.next_deadline_ms() == 100  # b's
    assert idle.tick(99) == 0
    assert idle.tick(100) == 1 and closed == [("b", 100)]
    assert idle.next_deadline_ms() == 150  # a's
    assert idle.tick(10_000) == 1 and closed == [("b", 100), ("a", 9_950)]
    assert idle.next_deadline_ms() is None  # the parked one is not in the order at all
    now[0] = 10_000
    idle.touch(parked)  # its answer is written: active again
    assert idle.next_deadline_ms() == 10_100


def test_a_negative_limit_turns_expiry_off() -> None:
    idle = IdleConnections(-1, lambda: 0)
    idle.touch(FakeConnection("a", []))
    assert idle.next_deadline_ms() is None and len(idle) == 0
