"""`Reply`: the loop-free, one-shot handle for a response the coordinator sends later.

JoinGroup and SyncGroup may be *parked* until the rest of the group catches up, and writes (SyncGroup, OffsetCommit,
DeleteGroups, OffsetDelete) are answered only once their records are durable. The coordinator hands such a caller
a `Reply` and completes it when the answer is known. It is deliberately not an `asyncio.Future`: the coordinator
and its tests run without an event loop. The broker bridges a `Reply` to a future with `on_complete`.

Callbacks run synchronously inside the coordinator's call that completes the reply; they must hand the value
over (resolve a future, queue a write) and must not call back into the coordinator.

Completing a reply twice is a bug in the coordinator (a member would receive two responses to one request), so it
is asserted, as the TigerStyle invariants in architecture.md ask.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

_PENDING = object()


class ReplyAlreadyCompletedError(AssertionError):
    """A reply was completed a second time: a coordinator bug, never a client error."""


class Reply(Generic[T]):
    """A single-assignment slot with completion callbacks.

    `done` tells whether the value is known; `value` returns it (and raises if not yet known); `on_complete`
    registers a callback that runs with the value right away if it is already known, else at completion.
    """

    __slots__ = ("_callbacks", "_value")

    def __init__(self) -> None:
        self._value: object = _PENDING
        self._callbacks: list[Callable[[T], None]] | None = None

    @classmethod
    def completed(cls, value: T) -> Reply[T]:
        """A reply that is already answered (the common, non-parked case)."""
        reply: Reply[T] = cls()
        reply._value = value
        return reply

    @property
    def done(self) -> bool:
        return self._value is not _PENDING

    @property
    def value(self) -> T:
        if self._value is _PENDING:
            raise LookupError("reply not completed yet")
        return self._value  # type: ignore[return-value]

    def complete(self, value: T) -> None:
        if self._value is not _PENDING:
            raise ReplyAlreadyCompletedError(f"reply completed twice: first {self._value!r}, then {value!r}")
        self._value = value
        callbacks = self._callbacks
        if callbacks is not None:
            self._callbacks = None
            for callback in callbacks:
                callback(value)

    def on_complete(self, callback: Callable[[T], None]) -> None:
        if self._value is not _PENDING:
            callback(self._value)  # type: ignore[arg-type]
            return
        if self._callbacks is None:
            self._callbacks = []
        self._callbacks.append(callback)

    def __repr__(self) -> str:
        return f"Reply({self._value!r})" if self.done else "Reply(<pending>)"
