"""The bridge from the dispatcher's async handlers to a sans-IO coordinator (the group coordinator and the
transaction coordinator alike).

A coordinator method takes the coordinator's request context, the request and the monotonic time, and returns
either a response or a `Reply` it completes later (a parked JoinGroup, a write waiting to be durable). The bridge
turns a pending `Reply` into an awaited future. Any call may move the coordinator's next deadline: a coordinator
whose deadlines the timer driver watches (`reports_deadlines`, the broker's two) tells the driver itself when one
moves earlier; for any other the bridge re-arms after every call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from broker.clock import BrokerClock
from broker.context import RequestContext
from coordinator.context import RequestContext as CoordinatorContext
from coordinator.reply import Reply

CoordinatorMethod = Callable[[CoordinatorContext, Any, int], Any]
Handler = Callable[[RequestContext, Any], Any]
T = TypeVar("T")


def bridge(method: CoordinatorMethod, clock: BrokerClock, rearm: Callable[[], None]) -> Handler:
    """An async handler that calls `method` with the coordinator's context and `clock`'s time."""
    owner = getattr(method, "__self__", None)
    watched = False  # once a driver watches the coordinator it always does: stop asking

    async def handle(ctx: RequestContext, request: Any) -> Any:
        nonlocal watched
        coordinator_ctx = CoordinatorContext(ctx.api_version, ctx.client_id or "", ctx.client_host, clock.wall_ms())
        result = method(coordinator_ctx, request, clock.monotonic_ms())
        if not watched:
            watched = getattr(owner, "reports_deadlines", False)
            if not watched:
                rearm()
        if not isinstance(result, Reply):
            return result
        return await awaited(result)

    return handle


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
