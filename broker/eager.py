"""Run a coroutine synchronously until it completes or parks; only a parked one becomes a Task.

Most requests (a Heartbeat, an OffsetCommit, ApiVersions) are answered by handlers that never wait: an `async def`
that returns without suspending. Wrapping each in an `asyncio.Task` costs a Task, a scheduled callback and a trip
through the event loop per request. `start` instead drives the coroutine with `send(None)`: if it returns, the
answer is there at once; if it yields (a JoinGroup parked until the rebalance completes, a long-poll Fetch), the
partly-run coroutine is handed to a Task through `_Parked`, which gives the Task the future the coroutine is already
waiting on and then passes every `send` and `throw` through. The coroutine runs on unchanged: cancelling the Task
reaches it at the point where it waits, exactly as if it had been a Task from the start.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine, Generator
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Done(Generic[T]):
    """A coroutine that returned without parking, and its value."""

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value


def start(
    coro: Coroutine[Any, Any, T], context: contextvars.Context, loop: asyncio.AbstractEventLoop
) -> Done[T] | asyncio.Task[T]:
    """Run `coro` up to its first suspension, in the caller's context (which must be `context`): its value if it
    returned, else a Task in `context` that carries on from where it parked. Exceptions it raises propagate."""
    try:
        pending = coro.send(None)
    except StopIteration as stop:
        return Done(stop.value)
    return loop.create_task(_Parked(coro, pending), context=context)


class _Parked(Coroutine[Any, Any, T]):
    """A coroutine already suspended on `pending`: the first step gives a Task that future back, the rest is the
    coroutine's own."""

    __slots__ = ("_coro", "_first", "_pending")

    def __init__(self, coro: Coroutine[Any, Any, T], pending: Any) -> None:
        self._coro = coro
        self._pending: Any = pending
        self._first = True

    def send(self, value: Any) -> Any:
        if self._first:
            self._first = False
            pending, self._pending = self._pending, None
            return pending
        return self._coro.send(value)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        self._first = False
        self._pending = None
        if val is None and tb is None:
            return self._coro.throw(typ)
        return self._coro.throw(typ, val, tb)  # pragma: no cover (the three-argument form: Tasks do not use it)

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Generator[Any, None, T]:  # pragma: no cover (a Task drives it with send/throw)
        raise TypeError("a parked coroutine is driven by its Task only")
