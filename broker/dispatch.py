"""Route decoded requests to handlers, and build the ApiVersions answer from what is registered.

Two extension points sit around every handler, for the metrics here and for the toolkit above the server (fault
injection, the recorder, the rebalance timeline), which the server never imports:

- a middleware chain (`use`): each middleware gets the request and the rest of the chain, and may answer itself
  (an injected error), wait first (injected latency) or act before passing the request on;
- request observers (`observe`): told when each request starts and how it ended; they never change the answer.

A handler that can answer in the call itself is a `SyncHandler` (the coordinator bridge): on a route no middleware
wraps, `call_now` serves it with no coroutine at all (a Heartbeat is decoded, answered and encoded in plain calls);
when such a handler must wait (a parked JoinGroup) it returns `Later`, and only then is there something to await.
Observers see both paths alike.

Advertised versions are exactly the registered handlers' ranges (never more than the codec speaks), so a client
can never negotiate a version we would fail to serve. A few APIs are served without being advertised, as Kafka
serves them (KIP-714's telemetry APIs when no metrics plugin is configured): `register(..., advertise=False)`.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from time import perf_counter
from typing import Any, Protocol

import structlog

from broker.context import RequestContext
from broker.features import NO_FEATURES, FeatureLevels
from protocol.api import encode_response
from protocol.errors import ErrorCode
from protocol.messages.api_versions import ApiVersion, ApiVersionsRequest, ApiVersionsResponse
from protocol.registry import APIS, ApiKey

Handler = Callable[[RequestContext, Any], Awaitable[Any]]
#: A handler's synchronous form: the answer, or `Later` when it must wait for it.
Now = Callable[[RequestContext, Any], Any]
StartHook = Callable[[RequestContext, int, Any], None]
FinishHook = Callable[[RequestContext, int, Any, Any, float], None]
#: ApiVersions carries the client's software name and version from this version on (KIP-511).
CLIENT_SOFTWARE_VERSION = 3
#: ApiVersions carries the cluster id and node id the client means to reach from this version on (KIP-1242).
CLUSTER_CHECK_VERSION = 5
#: Kafka's ApiVersionsRequest.SOFTWARE_NAME_VERSION_PATTERN: letters, digits, '-' and '.', alphanumeric at both ends.
SOFTWARE_NAME_OR_VERSION = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")
log = structlog.get_logger("broker.dispatch")
#: The cluster id and node id this broker answers as (KIP-1242's check), asked when an ApiVersions v5 arrives.
Identity = Callable[[], tuple[str, int]]


class Later:
    """A synchronous handler's word that its answer is not ready yet: awaiting `awaitable` gives it."""

    __slots__ = ("awaitable",)

    def __init__(self, awaitable: Awaitable[Any]) -> None:
        self.awaitable = awaitable


class SyncHandler(ABC):
    """A handler that answers within the call where it can (`now`), so that a route no middleware wraps is served
    without a coroutine; awaiting the handler itself (what a middleware chain does) gives the same answer."""

    __slots__ = ()

    @abstractmethod
    def now(self, ctx: RequestContext, request: Any) -> Any:
        """The answer, or `Later` when it must wait for one (never a coroutine or future itself)."""

    async def __call__(self, ctx: RequestContext, request: Any) -> Any:
        answer = self.now(ctx, request)
        if answer.__class__ is Later:
            return await answer.awaitable
        return answer


@dataclass(frozen=True, slots=True)
class Route:
    api_key: ApiKey
    min_version: int
    max_version: int
    handler: Handler
    advertised: bool = True
    #: The handler's synchronous form when it is a `SyncHandler` (used only while no middleware wraps the route).
    now: Now | None = None


class RequestObserver(Protocol):
    """Sees every request the dispatcher serves (the timeline and the metrics); must be cheap and never raise.

    `request_finished` is called exactly once per `request_started`, with `response` None when the handler
    raised (the connection is then closed) or was cancelled; `elapsed_s` is real time, including injected latency.

    An observer may also define `observes(api_key) -> (starts, finishes)`: whether it needs to hear of that API's
    requests starting and finishing (the answer must not change while it observes). The dispatcher then leaves it
    out where it does not, so that a Heartbeat does not pay for hooks that return at once. Without it, an observer
    hears of every request (then `request_finished` follows each `request_started`, as said above).
    """

    def request_started(self, ctx: RequestContext, api_key: int, request: Any) -> None: ...

    def request_finished(
        self, ctx: RequestContext, api_key: int, request: Any, response: Any, elapsed_s: float
    ) -> None: ...


class Middleware(Protocol):
    """One link of the dispatch chain: answer `request` (for `route`), usually by awaiting `call_next`.

    A middleware may also define `wraps(route) -> bool`: whether it needs to see that route's requests now. Chains
    leave out a middleware that does not, so an idle fault injector costs a request nothing; when its answer
    changes it calls `Dispatcher.refresh()`.
    """

    async def __call__(self, ctx: RequestContext, route: Route, request: Any, call_next: Handler) -> Any: ...


class Dispatcher:
    def __init__(self, identity: Identity | None = None) -> None:
        """`identity` is what KIP-1242's ApiVersions v5 check compares with; without it (a dispatcher in a unit
        test) the check is skipped."""
        self._identity = identity
        self._features: FeatureLevels = NO_FEATURES
        self.routes: dict[int, Route] = {}
        #: Per version, the successful ApiVersions answer and its encoded body once encoded: both depend only on
        #: the routes and the features, so they are built once and dropped when either changes.
        self._api_versions_answers: dict[int, tuple[ApiVersionsResponse, bytes | None]] = {}
        self.observers: tuple[RequestObserver, ...] = ()
        self.middlewares: tuple[Middleware, ...] = ()
        #: Each route's handler wrapped in the middlewares, composed once (not per request) and rebuilt when a
        #: middleware or a route is added.
        self._chains: dict[int, Handler] = {}
        #: Per route, while no middleware wraps it, its handler's synchronous form with the observers' hooks for its
        #: API; None where it has none or is wrapped (rebuilt as `_chains`, and when an observer is added).
        self._direct: dict[int, tuple[Now, tuple[StartHook, ...], tuple[FinishHook, ...]] | None] = {}
        #: Per API, the observers' hooks that want its requests' starts and finishes (rebuilt when one is added).
        self._hooks: dict[int, tuple[tuple[StartHook, ...], tuple[FinishHook, ...]]] = {}
        self.register(ApiKey.API_VERSIONS, self._api_versions)

    @property
    def features(self) -> FeatureLevels:
        """What ApiVersions v3+ reports as supported and finalized features (the broker sets its own)."""
        return self._features

    @features.setter
    def features(self, features: FeatureLevels) -> None:
        self._features = features
        self._api_versions_answers.clear()

    def use(self, middleware: Middleware) -> None:
        """Add a middleware; the first added is the outermost."""
        self.middlewares = (*self.middlewares, middleware)
        self.refresh()

    def refresh(self) -> None:
        """Compose the chains again: a middleware's `wraps` answer changed (a fault was injected or used up)."""
        self._chains.clear()
        self._direct.clear()

    def observe(self, observer: RequestObserver) -> None:
        self.observers = (*self.observers, observer)
        self._hooks.clear()
        self._direct.clear()

    async def call(self, ctx: RequestContext, route: Route, request: Any) -> Any:
        """Run the handler through the middlewares, and tell the observers when it started and how it ended
        (the chain is composed once per route, so a request costs one await per middleware and no allocation)."""
        chain = self._chain_of(route)
        starts, finishes = self._hooks_for(route.api_key)
        started = self._started(starts, ctx, route.api_key, request)
        return await self._observed(finishes, ctx, route.api_key, request, chain(ctx, request), started)

    def call_now(self, ctx: RequestContext, route: Route, request: Any) -> Any:
        """The answer without a coroutine where the route allows it (a `SyncHandler` no middleware wraps), the
        observers told as by `call`; else `Later`, whose awaitable gives the answer (through `call`, or once a
        synchronous handler's wait is over) and tells the observers how it ended."""
        api_key = route.api_key
        direct = self._direct.get(api_key, _UNKNOWN)
        if direct is _UNKNOWN:
            direct = self._direct[api_key] = self._direct_for(route)
        if direct is None:
            return Later(self.call(ctx, route, request))
        now, starts, finishes = direct
        started = self._started(starts, ctx, api_key, request)
        try:
            response = now(ctx, request)
        except BaseException:
            self._finished(finishes, ctx, api_key, request, None, started)
            raise
        if response.__class__ is Later:
            return Later(self._observed(finishes, ctx, api_key, request, response.awaitable, started))
        if finishes:
            self._finished(finishes, ctx, api_key, request, response, started)
        return response

    def _direct_for(self, route: Route) -> tuple[Now, tuple[StartHook, ...], tuple[FinishHook, ...]] | None:
        """What `call_now` needs for a route served synchronously: its handler's `now` and the observers' hooks."""
        if route.now is None or self._chain_of(route) is not route.handler:
            return None
        return (route.now, *self._hooks_for(route.api_key))

    def _chain_of(self, route: Route) -> Handler:
        """The route's composed chain (composed on first use)."""
        chain = self._chains.get(route.api_key)
        if chain is None:
            chain = self._chains[route.api_key] = self._compose(route)
        return chain

    def _hooks_for(self, api_key: int) -> tuple[tuple[StartHook, ...], tuple[FinishHook, ...]]:
        """The observers' hooks for `api_key`'s requests: those whose `observes` wants them (all without it)."""
        hooks = self._hooks.get(api_key)
        if hooks is None:
            starts: list[StartHook] = []
            finishes: list[FinishHook] = []
            for observer in self.observers:
                wants = getattr(observer, "observes", None)
                start, finish = wants(api_key) if wants is not None else (True, True)
                if start:
                    starts.append(observer.request_started)
                if finish:
                    finishes.append(observer.request_finished)
            hooks = self._hooks[api_key] = (tuple(starts), tuple(finishes))
        return hooks

    @staticmethod
    def _started(starts: tuple[StartHook, ...], ctx: RequestContext, api_key: int, request: Any) -> float:
        """Tell the observers a request started; the time it did (for `elapsed_s`)."""
        if starts:
            try:
                for start in starts:
                    start(ctx, api_key, request)
            except Exception:
                log.exception("dispatch.observer_failed", api_key=api_key)
        return perf_counter()

    @staticmethod
    def _finished(
        finishes: tuple[FinishHook, ...], ctx: RequestContext, api_key: int, request: Any, response: Any, started: float
    ) -> None:
        if finishes:
            elapsed_s = perf_counter() - started
            try:
                for finish in finishes:
                    finish(ctx, api_key, request, response, elapsed_s)
            except Exception:  # observability must never cost a client its answer
                log.exception("dispatch.observer_failed", api_key=api_key)

    async def _observed(
        self,
        finishes: tuple[FinishHook, ...],
        ctx: RequestContext,
        api_key: int,
        request: Any,
        answer: Awaitable[Any],
        started: float,
    ) -> Any:
        """`answer` awaited, the observers told how it ended (None when it raised or was cancelled)."""
        response = None
        try:
            response = await answer
        finally:
            self._finished(finishes, ctx, api_key, request, response, started)
        return response

    def _compose(self, route: Route) -> Handler:
        """The route's handler inside every middleware, outermost first (the handler itself when there is none)."""
        chain = route.handler
        for middleware in reversed(self.middlewares):
            wraps = getattr(middleware, "wraps", None)
            if wraps is None or wraps(route):
                chain = _link(middleware, route, chain)
        return chain

    def register(
        self, api_key: ApiKey, handler: Handler, versions: tuple[int, int] | None = None, *, advertise: bool = True
    ) -> None:
        """Serve `api_key` at `versions` (default: every version the codec speaks); `advertise=False` serves it
        without listing it in ApiVersions."""
        spec = APIS[api_key]
        lo, hi = versions or (spec.min_version, spec.max_version)
        assert spec.min_version <= lo <= hi <= spec.max_version, (api_key, lo, hi)
        now = handler.now if isinstance(handler, SyncHandler) else None
        self.routes[api_key] = Route(api_key, lo, hi, handler, advertise, now)
        self._chains.pop(api_key, None)
        self._direct.pop(api_key, None)
        self._api_versions_answers.clear()

    def route(self, api_key: int, api_version: int) -> Route | None:
        route = self.routes.get(api_key)
        if route is None or not route.min_version <= api_version <= route.max_version:
            return None
        return route

    def advertised(self) -> list[ApiVersion]:
        return [
            ApiVersion(api_key=r.api_key, min_version=r.min_version, max_version=r.max_version)
            for r in sorted(self.routes.values(), key=lambda r: r.api_key)
            if r.advertised
        ]

    async def _api_versions(self, ctx: RequestContext, request: ApiVersionsRequest) -> ApiVersionsResponse:
        """Refusals carry no ranges, in Kafka's order (KafkaApis' ApiVersions callback):

        - INVALID_REQUEST for what ApiVersionsRequest.isValid rejects: v5+ giving only one of cluster id and node
          id (KIP-1242 wants both or neither), v3+ naming the client (KIP-511) outside Kafka's pattern;
        - REBOOTSTRAP_REQUIRED when v5+ names a cluster id and it or the node id is not this broker's: the client
          was pointed at another cluster or node and must bootstrap again.
        """
        v = ctx.api_version
        wants_cluster = request.cluster_id is not None
        if v >= CLUSTER_CHECK_VERSION and wants_cluster != (request.node_id != -1):
            return ApiVersionsResponse(error_code=ErrorCode.INVALID_REQUEST)
        if v >= CLIENT_SOFTWARE_VERSION and not (
            SOFTWARE_NAME_OR_VERSION.fullmatch(request.client_software_name)
            and SOFTWARE_NAME_OR_VERSION.fullmatch(request.client_software_version)
        ):
            return ApiVersionsResponse(error_code=ErrorCode.INVALID_REQUEST)
        if v >= CLUSTER_CHECK_VERSION and wants_cluster and not self._is_us(request.cluster_id, request.node_id):
            log.info(
                "api_versions.rebootstrap_required",
                cluster_id=request.cluster_id,
                node_id=request.node_id,
                client_id=ctx.client_id,
            )
            return ApiVersionsResponse(error_code=ErrorCode.REBOOTSTRAP_REQUIRED)
        cached = self._api_versions_answers.get(v)
        if cached is None:
            answer = ApiVersionsResponse(
                error_code=ErrorCode.NONE,
                api_keys=self.advertised(),
                supported_features=self.features.supported_keys(v),
                finalized_features_epoch=self.features.epoch,
                finalized_features=self.features.finalized_keys(),
            )
            cached = self._api_versions_answers[v] = (answer, None)
        return cached[0]

    def encoded_api_versions(self, api_version: int, body: Any) -> bytes | None:
        """The encoded body of `body` if it is this dispatcher's successful ApiVersions answer at `api_version`
        (what follows the size and the correlation id: ApiVersions answers always use response header v0), encoded
        the first time it is asked; None for any other answer (a refusal, a middleware's own)."""
        cached = self._api_versions_answers.get(api_version)
        if cached is None or cached[0] is not body:
            return None
        answer, encoded = cached
        if encoded is None:
            encoded = encode_response(ApiKey.API_VERSIONS, api_version, 0, answer)[8:]
            self._api_versions_answers[api_version] = (answer, encoded)
        return encoded

    def _is_us(self, cluster_id: str | None, node_id: int) -> bool:
        """Whether KIP-1242's (cluster id, node id) names this broker (always, without an identity to compare)."""
        return self._identity is None or (cluster_id, node_id) == self._identity()

    def unsupported_api_versions(self) -> ApiVersionsResponse:
        """KIP-511: an ApiVersions version we do not know is answered in v0 with error 35 and our range for it."""
        route = self.routes[ApiKey.API_VERSIONS]
        return ApiVersionsResponse(
            error_code=ErrorCode.UNSUPPORTED_VERSION,
            api_keys=[
                ApiVersion(api_key=ApiKey.API_VERSIONS, min_version=route.min_version, max_version=route.max_version)
            ],
        )


_UNKNOWN: Any = object()


def _link(middleware: Middleware, route: Route, call_next: Handler) -> Handler:
    """One middleware bound to its route and to the rest of the chain."""

    async def linked(ctx: RequestContext, request: Any) -> Any:
        return await middleware(ctx, route, request, call_next)

    return linked
