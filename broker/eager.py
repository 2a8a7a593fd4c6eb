"""Run a coroutine synchronously until it completes or parks; only a parked one becomes a Task.

Most requests (a Heartbeat, an OffsetCommit answered from memory, ApiVersions) are answered by handlers that never
wait: an `async def` that returns without suspending. Wrapping each in an `asyncio.Task` costs a Task, a scheduled
callback and a trip through the event loop per request. `start` instead drives the coroutine with `send(None)`: if it
returns, the answer is there at once; if it yields (a JoinGroup parked until the rebalance completes, a long-poll
Fetch, an OffsetCommit waiting to be durable), the partly-run coroutine is handed to a Task through `_Parked`, which
gives the Task the future the coroutine is already waiting on and then passes every `send` and `throw` through. The
coroutine runs on unchanged: cancelling the Task reaches it where it waits, exactly as if it had been a Task from
the start (even before the Task's first step). When it ends, `finish` is called inside that same Task step, so the
answer goes out without a further trip through the loop (a done callback would cost one).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Coroutine, Generator
from typing import Any, Generic, TypeVar

T = TypeVar("T")
#: Told how a parked coroutine ended: its value, or the exception it raised (None when it returned).
Finish = Callable[[Any, Exception | None], None]


class Done(Generic[T]):
    """A coroutine that returned without parking, and its value."""

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value


def start(
    coro: Coroutine[Any, Any, T], context: contextvars.Context, loop: asyncio.AbstractEventLoop, finish: Finish
) -> Done[T] | asyncio.Task[None]:
    """Run `coro` up to its first suspension, in the caller's context (which must be `context`): its value if it
    returned (exceptions it raises propagate), else a Task in `context` that carries it on from where it parked and
    calls `finish` with how it ended (not when it is cancelled: the Task then ends cancelled)."""
    try:
        pending = coro.send(None)
    except StopIteration as stop:
        return Done(stop.value)
    return loop.create_task(_Parked(coro, pending, finish), context=context)


class _Parked(Coroutine[Any, Any, None]):
    """A coroutine already suspended on `pending`: the first step gives a Task that future back, the rest is the
    coroutine's own, and its end is reported to `finish`."""

    __slots__ = ("_coro", "_finish", "_first", "_pending")

    def __init__(self, coro: Coroutine[Any, Any, Any], pending: Any, finish: Finish) -> None:
        self._coro = coro
        self._pending: Any = pending
        self._finish = finish
        self._first = True

    def send(self, value: Any) -> Any:
        if self._first:
            self._first = False
            pending, self._pending = self._pending, None
            return pending
        return self._step(self._coro.send, value)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        self._first = False
        self._pending = None
        return self._step(self._coro.throw, typ if val is None else val)  # Tasks throw an exception instance

    def _step(self, resume: Callable[[Any], Any], arg: Any) -> Any:
        try:
            return resume(arg)
        except StopIteration as stop:
            self._finish(stop.value, None)
        except Exception as exc:  # CancelledError (a BaseException) ends the Task cancelled, unreported
            self._finish(None, exc)
        raise StopIteration

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Generator[Any, None, None]:  # pragma: no cover (a Task drives it with send/throw)
        raise TypeError("a parked coroutine is driven by its Task only")
