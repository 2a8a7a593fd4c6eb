"""The dispatch chain: middlewares run outermost first, composed once per route, and a middleware that says it
does not need a route's requests (`wraps`) is left out of that route's chain until `refresh()`."""

from __future__ import annotations

from typing import Any, cast

from broker.context import RequestContext
from broker.dispatch import Dispatcher, Handler, Route
from protocol.registry import ApiKey

CTX = cast(RequestContext, object())


class Tagging:
    """Appends its name to the request (a list) on the way in; optionally only for some APIs."""

    def __init__(self, name: str, only: set[int] | None = None) -> None:
        self.name = name
        self.only = only
        self.calls = 0

    def wraps(self, route: Route) -> bool:
        return self.only is None or route.api_key in self.only

    async def __call__(self, ctx: RequestContext, route: Route, request: Any, call_next: Handler) -> Any:
        self.calls += 1
        request.append(self.name)
        return await call_next(ctx, request)


async def answer(ctx: RequestContext, request: list[str]) -> list[str]:
    return [*request, "handler"]


def dispatcher_with(*middlewares: Tagging) -> Dispatcher:
    dispatcher = Dispatcher()
    dispatcher.register(ApiKey.HEARTBEAT, answer)
    dispatcher.register(ApiKey.FIND_COORDINATOR, answer)
    for middleware in middlewares:
        dispatcher.use(middleware)
    return dispatcher


async def call(dispatcher: Dispatcher, api_key: ApiKey) -> Any:
    route = dispatcher.routes[api_key]
    return await dispatcher.call(CTX, route, [])


async def test_middlewares_run_outermost_first_around_the_handler() -> None:
    dispatcher = dispatcher_with(Tagging("outer"), Tagging("inner"))
    assert await call(dispatcher, ApiKey.HEARTBEAT) == ["outer", "inner", "handler"]
    assert await call(dispatcher, ApiKey.HEARTBEAT) == ["outer", "inner", "handler"]  # the cached chain


async def test_a_middleware_is_left_out_of_routes_it_does_not_wrap() -> None:
    moves = Tagging("moves", only={ApiKey.FIND_COORDINATOR})
    dispatcher = dispatcher_with(Tagging("faults"), moves)
    assert await call(dispatcher, ApiKey.HEARTBEAT) == ["faults", "handler"]
    assert await call(dispatcher, ApiKey.FIND_COORDINATOR) == ["faults", "moves", "handler"]
    assert moves.calls == 1


async def test_refresh_takes_a_changed_wraps_answer_into_account() -> None:
    faults = Tagging("faults", only=set())
    dispatcher = dispatcher_with(faults)
    assert await call(dispatcher, ApiKey.HEARTBEAT) == ["handler"]
    assert faults.only is not None
    faults.only.add(ApiKey.HEARTBEAT)  # a fault was injected for Heartbeat
    assert await call(dispatcher, ApiKey.HEARTBEAT) == ["handler"]  # the chain is still the composed one
    dispatcher.refresh()
    assert await call(dispatcher, ApiKey.HEARTBEAT) == ["faults", "handler"]
