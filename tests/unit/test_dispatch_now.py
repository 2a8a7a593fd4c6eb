"""The synchronous dispatch path: a `SyncHandler` no middleware wraps is answered inside `call_now` (no coroutine),
a wrapped one still goes through its middleware, a handler that must wait says `Later`, and the observers hear of
every request alike (only of the APIs they say they observe). The coordinator bridge is such a handler."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from broker.context import RequestContext
from broker.dispatch import Dispatcher, Handler, Later, Route, SyncHandler
from broker.handlers.bridge import Bridged
from coordinator.reply import Reply
from protocol.registry import ApiKey

CTX = cast(RequestContext, object())


class Answering(SyncHandler):
    """Answers `request + ["now"]` at once, or `Later` (a future the test resolves) when the request says "wait"."""

    def __init__(self) -> None:
        self.waiting: asyncio.Future[Any] | None = None

    def now(self, ctx: RequestContext, request: list[str]) -> Any:
        if "fail" in request:
            raise RuntimeError("handler failed")
        if "wait" in request:
            self.waiting = asyncio.get_running_loop().create_future()
            return Later(self.waiting)
        return [*request, "now"]


class Tagging:
    def __init__(self, only: set[int]) -> None:
        self.only = only

    def wraps(self, route: Route) -> bool:
        return route.api_key in self.only

    async def __call__(self, ctx: RequestContext, route: Route, request: Any, call_next: Handler) -> Any:
        return await call_next(ctx, [*request, "middleware"])


class Observer:
    def __init__(self, observes: tuple[bool, bool] | None = None) -> None:
        self.events: list[tuple[str, int, Any]] = []
        if observes is not None:
            self.observes = lambda api_key: observes

    def request_started(self, ctx: RequestContext, api_key: int, request: Any) -> None:
        self.events.append(("started", api_key, list(request)))

    def request_finished(self, ctx: RequestContext, api_key: int, request: Any, response: Any, elapsed: float) -> None:
        self.events.append(("finished", api_key, response))


def dispatching(*observers: Observer) -> tuple[Dispatcher, Answering]:
    dispatcher = Dispatcher()
    handler = Answering()
    dispatcher.register(ApiKey.HEARTBEAT, handler)
    for observer in observers:
        dispatcher.observe(observer)
    return dispatcher, handler


async def test_an_unwrapped_sync_route_is_answered_in_the_call_itself() -> None:
    observer = Observer()
    dispatcher, _ = dispatching(observer)
    answer = dispatcher.call_now(CTX, dispatcher.routes[ApiKey.HEARTBEAT], ["hb"])
    assert answer == ["hb", "now"]
    assert observer.events == [("started", ApiKey.HEARTBEAT, ["hb"]), ("finished", ApiKey.HEARTBEAT, ["hb", "now"])]


async def test_a_wrapped_sync_route_still_goes_through_its_middleware() -> None:
    dispatcher, _ = dispatching()
    faults = Tagging(only=set())
    dispatcher.use(faults)
    route = dispatcher.routes[ApiKey.HEARTBEAT]
    assert dispatcher.call_now(CTX, route, ["hb"]) == ["hb", "now"]
    faults.only.add(ApiKey.HEARTBEAT)  # a fault injected for Heartbeat: the middleware now wraps it
    dispatcher.refresh()
    answer = dispatcher.call_now(CTX, route, ["hb"])
    assert isinstance(answer, Later)
    assert await answer.awaitable == ["hb", "middleware", "now"]


async def test_a_sync_handler_that_must_wait_says_later_and_the_observers_hear_when_it_ends() -> None:
    observer = Observer()
    dispatcher, handler = dispatching(observer)
    answer = dispatcher.call_now(CTX, dispatcher.routes[ApiKey.HEARTBEAT], ["wait"])
    assert isinstance(answer, Later)
    assert observer.events == [("started", ApiKey.HEARTBEAT, ["wait"])]
    assert handler.waiting is not None
    handler.waiting.set_result("answered")
    assert await answer.awaitable == "answered"
    assert observer.events[-1] == ("finished", ApiKey.HEARTBEAT, "answered")


async def test_a_failing_sync_handler_raises_and_its_observers_hear_no_response() -> None:
    observer = Observer()
    dispatcher, _ = dispatching(observer)
    with pytest.raises(RuntimeError, match="handler failed"):
        dispatcher.call_now(CTX, dispatcher.routes[ApiKey.HEARTBEAT], ["fail"])
    assert observer.events[-1] == ("finished", ApiKey.HEARTBEAT, None)


async def test_a_plain_async_handler_is_answered_through_call() -> None:
    async def plain(ctx: RequestContext, request: list[str]) -> list[str]:
        return [*request, "async"]

    observer = Observer()
    dispatcher = Dispatcher()
    dispatcher.register(ApiKey.HEARTBEAT, plain)
    dispatcher.observe(observer)
    answer = dispatcher.call_now(CTX, dispatcher.routes[ApiKey.HEARTBEAT], ["hb"])
    assert isinstance(answer, Later)
    assert await answer.awaitable == ["hb", "async"]
    assert [event[0] for event in observer.events] == ["started", "finished"]


async def test_observers_are_told_only_of_what_they_observe() -> None:
    finishes_only, starts_only, everything = Observer((False, True)), Observer((True, False)), Observer()
    dispatcher, _ = dispatching(finishes_only, starts_only, everything)
    dispatcher.call_now(CTX, dispatcher.routes[ApiKey.HEARTBEAT], ["hb"])
    assert [event[0] for event in finishes_only.events] == ["finished"]
    assert [event[0] for event in starts_only.events] == ["started"]
    assert [event[0] for event in everything.events] == ["started", "finished"]


class FakeClock:
    def wall_ms(self) -> int:
        return 1_000

    def monotonic_ms(self) -> int:
        return 5


class Coordinator:
    """A coordinator method answering what the test sets: a response, or a `Reply` (complete or not)."""

    reports_deadlines = True

    def __init__(self, result: Any) -> None:
        self.result = result
        self.calls: list[tuple[Any, int]] = []

    def method(self, ctx: Any, request: Any, now_ms: int) -> Any:
        self.calls.append((ctx, now_ms))
        return self.result


def bridged(result: Any) -> tuple[Bridged, Coordinator]:
    coordinator = Coordinator(result)
    return Bridged(coordinator.method, FakeClock(), lambda: None), coordinator  # type: ignore[arg-type]


class Session:
    peer_host = "10.0.0.7"


def request_context() -> RequestContext:
    return RequestContext(Session(), ApiKey.HEARTBEAT, 3, 1, "client")  # type: ignore[arg-type]


async def test_the_bridge_answers_a_coordinator_response_or_a_completed_reply_at_once() -> None:
    handler, coordinator = bridged("response")
    assert handler.now(request_context(), object()) == "response"
    ctx, now_ms = coordinator.calls[0]
    assert (ctx.api_version, ctx.client_id, ctx.client_host, ctx.wall_ms, now_ms) == (3, "client", "/10.0.0.7", 1000, 5)
    handler, _ = bridged(Reply.completed("done"))
    assert handler.now(request_context(), object()) == "done"


async def test_the_bridge_says_later_for_a_pending_reply_and_awaiting_it_gives_the_value() -> None:
    reply: Reply[str] = Reply()
    handler, _ = bridged(reply)
    answer = handler.now(request_context(), object())
    assert isinstance(answer, Later)
    waiting = asyncio.ensure_future(answer.awaitable)
    await asyncio.sleep(0)
    reply.complete("joined")
    assert await waiting == "joined"
    assert await handler(request_context(), object()) == "joined"  # awaited as a handler (inside a chain): the same


async def test_the_bridge_hands_the_same_coordinator_context_only_while_nothing_in_it_changed() -> None:
    handler, coordinator = bridged("response")
    session = Session()
    for client_id, version in (("a", 3), ("a", 3), ("b", 3), ("b", 2)):
        handler.now(RequestContext(session, ApiKey.HEARTBEAT, version, 1, client_id), object())  # type: ignore[arg-type]
    handler.now(RequestContext(Session(), ApiKey.HEARTBEAT, 2, 1, "b"), object())  # type: ignore[arg-type]
    contexts = [ctx for ctx, _ in coordinator.calls]
    assert contexts[0] is contexts[1]
    assert len({id(ctx) for ctx in contexts}) == 4  # another client id, version, or connection: a context of its own
    assert [(c.client_id, c.api_version) for c in contexts] == [("a", 3), ("a", 3), ("b", 3), ("b", 2), ("b", 2)]
