"""Route decoded requests to handlers, and build the ApiVersions answer from what is registered.

Advertised versions are exactly the registered handlers' ranges (never more than the codec speaks), so a client
can never negotiate a version we would fail to serve.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from time import perf_counter
from typing import Any, Protocol

import structlog

from broker.context import RequestContext
from broker.faults import Faults, error_codes, error_response
from broker.recorder import Exchange, Recorder
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


class Dispatcher:
    def __init__(self, now_ms: Callable[[], int] = lambda: 0) -> None:
        self.routes: dict[int, Route] = {}
        self.faults = Faults()
        self.recorder = Recorder()
        self.observers: tuple[RequestObserver, ...] = ()
        self._now_ms = now_ms
        self.register(ApiKey.API_VERSIONS, self._api_versions)

    async def call(self, ctx: RequestContext, route: Route, request: Any) -> Any:
        """Run the handler, with injected latency or errors when a test asked for them, record the exchange, and
        tell the observers when it started and how it ended (one coroutine: no extra await on the hot path)."""
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
            faults = self.faults
            if faults.latencies and (delay_ms := faults.take_latency_ms(api_key)):
                await asyncio.sleep(delay_ms / 1000)
            error = faults.take_error(api_key, ctx.client_id, request) if faults.errors else None
            if error is not None:
                response = error_response(api_key, ctx.api_version, request, error)
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
        if self.recorder.enabled:
            self.recorder.record(
                Exchange(
                    self._now_ms(),
                    ctx.session.conn_id,
                    ctx.client_id,
                    api_key,
                    ctx.api_version,
                    ctx.correlation_id,
                    request,
                    response,
                    tuple(error_codes(response)) if response is not None else (),
                )
            )
        return response

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
