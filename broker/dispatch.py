"""Route decoded requests to handlers, and build the ApiVersions answer from what is registered.

Two extension points sit around every handler, for the metrics here and for the toolkit above the server (fault
injection, the recorder, the rebalance timeline), which the server never imports:

- a middleware chain (`use`): each middleware gets the request and the rest of the chain, and may answer itself
  (an injected error), wait first (injected latency) or act before passing the request on;
- request observers (`observe`): told when each request starts and how it ended; they never change the answer.

Advertised versions are exactly the registered handlers' ranges (never more than the codec speaks), so a client
can never negotiate a version we would fail to serve.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from time import perf_counter
from typing import Any, Protocol

import structlog

from broker.context import RequestContext
from protocol.errors import ErrorCode
from protocol.messages.api_versions import ApiVersion, ApiVersionsRequest, ApiVersionsResponse
from protocol.registry import APIS, ApiKey

Handler = Callable[[RequestContext, Any], Awaitable[Any]]
log = structlog.get_logger("broker.dispatch")


@dataclass(frozen=True, slots=True)
class Route:
    api_key: ApiKey
    min_version: int
    max_version: int
    handler: Handler


class RequestObserver(Protocol):
    """Sees every request the dispatcher serves (the timeline and the metrics); must be cheap and never raise.

    `request_finished` is called exactly once per `request_started`, with `response` None when the handler
    raised (the connection is then closed) or was cancelled; `elapsed_s` is real time, including injected latency.
    """

    def request_started(self, ctx: RequestContext, api_key: int, request: Any) -> None: ...

    def request_finished(
        self, ctx: RequestContext, api_key: int, request: Any, response: Any, elapsed_s: float
    ) -> None: ...


class Middleware(Protocol):
    """One link of the dispatch chain: answer `request` (for `route`), usually by awaiting `call_next`."""

    async def __call__(self, ctx: RequestContext, route: Route, request: Any, call_next: Handler) -> Any: ...


class Dispatcher:
    def __init__(self) -> None:
        self.routes: dict[int, Route] = {}
        self.observers: tuple[RequestObserver, ...] = ()
        self.middlewares: tuple[Middleware, ...] = ()
        self.register(ApiKey.API_VERSIONS, self._api_versions)

    def use(self, middleware: Middleware) -> None:
        """Add a middleware; the first added is the outermost."""
        self.middlewares = (*self.middlewares, middleware)

    def observe(self, observer: RequestObserver) -> None:
        self.observers = (*self.observers, observer)

    async def call(self, ctx: RequestContext, route: Route, request: Any) -> Any:
        """Run the handler through the middlewares, and tell the observers when it started and how it ended
        (one coroutine, and no chain at all without middlewares: no extra await on the hot path)."""
        observers = self.observers
        api_key = route.api_key
        started = 0.0
        if observers:
            try:
                for observer in observers:
                    observer.request_started(ctx, api_key, request)
            except Exception:
                log.exception("dispatch.observer_failed", api_key=api_key)
            started = perf_counter()
        response = None
        try:
            if self.middlewares:
                response = await self._through(0, ctx, route, request)
            else:
                response = await route.handler(ctx, request)
        finally:
            if observers:
                elapsed_s = perf_counter() - started
                try:
                    for observer in observers:
                        observer.request_finished(ctx, api_key, request, response, elapsed_s)
                except Exception:  # observability must never cost a client its answer
                    log.exception("dispatch.observer_failed", api_key=api_key)
        return response

    async def _through(self, index: int, ctx: RequestContext, route: Route, request: Any) -> Any:
        if index == len(self.middlewares):
            return await route.handler(ctx, request)

        async def call_next(next_ctx: RequestContext, next_request: Any) -> Any:
            return await self._through(index + 1, next_ctx, route, next_request)

        return await self.middlewares[index](ctx, route, request, call_next)

    def register(self, api_key: ApiKey, handler: Handler, versions: tuple[int, int] | None = None) -> None:
        spec = APIS[api_key]
        lo, hi = versions or (spec.min_version, spec.max_version)
        assert spec.min_version <= lo <= hi <= spec.max_version, (api_key, lo, hi)
        self.routes[api_key] = Route(api_key, lo, hi, handler)

    def route(self, api_key: int, api_version: int) -> Route | None:
        route = self.routes.get(api_key)
        if route is None or not route.min_version <= api_version <= route.max_version:
            return None
        return route

    def advertised(self) -> list[ApiVersion]:
        return [
            ApiVersion(api_key=r.api_key, min_version=r.min_version, max_version=r.max_version)
            for r in sorted(self.routes.values(), key=lambda r: r.api_key)
        ]

    async def _api_versions(self, ctx: RequestContext, request: ApiVersionsRequest) -> ApiVersionsResponse:
        return ApiVersionsResponse(error_code=ErrorCode.NONE, api_keys=self.advertised())

    def unsupported_api_versions(self) -> ApiVersionsResponse:
        """KIP-511: an ApiVersions version we do not know is answered in v0 with error 35 and our range for it."""
        route = self.routes[ApiKey.API_VERSIONS]
        return ApiVersionsResponse(
            error_code=ErrorCode.UNSUPPORTED_VERSION,
            api_keys=[
                ApiVersion(api_key=ApiKey.API_VERSIONS, min_version=route.min_version, max_version=route.max_version)
            ],
        )
