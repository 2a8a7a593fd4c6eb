"""The bridge from the dispatcher's handlers to a sans-IO coordinator (the group coordinator and the transaction
coordinator alike).

A coordinator method takes the coordinator's request context, the request and the monotonic time, and returns
either a response or a `Reply` it completes later (a parked JoinGroup, a write waiting to be durable). The bridge is a
`SyncHandler`: an answer the coordinator gives at once (a Heartbeat, nearly always) is returned from the call itself,
so the dispatcher serves it with no coroutine; only a pending `Reply` becomes something to await (`Later`). Any call
may move the coordinator's next deadline: a coordinator whose deadlines the timer driver watches
(`reports_deadlines`, the broker's two) tells the driver itself when one moves earlier; for any other the bridge
re-arms after every call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from broker.clock import BrokerClock
from broker.context import RequestContext
from broker.dispatch import Later, SyncHandler
from coordinator.context import RequestContext as CoordinatorContext
from coordinator.reply import Reply

CoordinatorMethod = Callable[[CoordinatorContext, Any, int], Any]
Handler = Callable[[RequestContext, Any], Any]
T = TypeVar("T")


class Bridged(SyncHandler):
    """`method` called with the coordinator's context and `clock`'s time; its answer now, or `Later`.

    The coordinator's context is frozen, so the one made for the previous request is handed again while nothing it
    says changed (the same connection, whose peer is fixed for its life, the same version and client id, the same
    wall-clock millisecond): a run of pipelined heartbeats does not build one each (a frozen dataclass costs ~0.5 us).
    """

    __slots__ = ("_clock", "_context", "_method", "_owner", "_rearm", "_session", "_watched")

    def __init__(self, method: CoordinatorMethod, clock: BrokerClock, rearm: Callable[[], None]) -> None:
        self._method = method
        self._clock = clock
        self._rearm = rearm
        self._owner = getattr(method, "__self__", None)
        self._watched = False  # once a driver watches the coordinator it always does: stop asking
        self._context: CoordinatorContext | None = None  # the last request's, and the session it was made for
        self._session: object = None

    def now(self, ctx: RequestContext, request: Any) -> Any:
        clock = self._clock
        wall_ms = clock.wall_ms()
        client_id = ctx.client_id or ""
        coordinator_ctx = self._context
        if (
            coordinator_ctx is None
            or coordinator_ctx.wall_ms != wall_ms
            or ctx.session is not self._session
            or coordinator_ctx.api_version != ctx.api_version
            or coordinator_ctx.client_id != client_id
        ):
            coordinator_ctx = self._context = CoordinatorContext(ctx.api_version, client_id, ctx.client_host, wall_ms)
            self._session = ctx.session
        result = self._method(coordinator_ctx, request, clock.monotonic_ms())
        if not self._watched:
            self._watched = getattr(self._owner, "reports_deadlines", False)
            if not self._watched:
                self._rearm()
        if result.__class__ is not Reply:
            return result
        if result.done:
            return result.value
        return Later(awaited(result))


def bridge(method: CoordinatorMethod, clock: BrokerClock, rearm: Callable[[], None]) -> Bridged:
    """A handler that calls `method` with the coordinator's context and `clock`'s time."""
    return Bridged(method, clock, rearm)


async def awaited(reply: Reply[T]) -> T:
    """The value of a coordinator's `Reply`, now if it is complete, else once it completes."""
    if reply.done:
        return reply.value
    future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    reply.on_complete(lambda value: _resolve(future, value))
    return await future


def _resolve(future: asyncio.Future[T], value: T) -> None:
    if not future.done():
        future.set_result(value)
