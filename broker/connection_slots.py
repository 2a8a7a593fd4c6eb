"""`max.connections`: how many connections are served at once; the ones beyond wait, unread, for a slot.

As Kafka's acceptor waits for a connection slot, a connection accepted while every slot is taken is not served
(nothing of it is read) until another closes: the slot passes straight to the longest waiting one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class ConnectionSlots(Generic[T]):
    def __init__(self, limit: int, admit: Callable[[T], None]) -> None:
        self._free = limit
        self._admit = admit
        self._waiting: deque[T] = deque()

    def request(self, who: T) -> bool:
        """Admit `who` now (True) or queue it until a slot frees (False)."""
        if self._free > 0 and not self._waiting:
            self._free -= 1
            self._admit(who)
            return True
        self._waiting.append(who)
        return False

    def leave(self, who: T, admitted: bool) -> None:
        """`who` is gone: its slot goes to the next waiting, or it leaves the queue if it never had one."""
        if not admitted:
            if who in self._waiting:
                self._waiting.remove(who)
            return
        if self._waiting:
            self._admit(self._waiting.popleft())
        else:
            self._free += 1

    @property
    def waiting(self) -> list[T]:
        return list(self._waiting)
