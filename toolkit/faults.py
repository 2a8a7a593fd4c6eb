"""Fault injection: answer the next requests of an API with an error, slow an API down, fail offsets appends, fail
or hold back transaction markers, refuse the next TLS handshakes and fail the next SASL authentications.

It reaches the server only through its extension points: `FaultMiddleware` sits in the dispatcher's middleware
chain, `FailingRecordLog` wraps the coordinator's record log, the marker rules are applied by `MarkerFaults`
(`toolkit/marker_faults.py`) through the marker channel's `intercept`, and injected latency and held markers wait
on the broker clock (`advance` moves it; a frozen clock makes them wait for `advance`); authentication failures
through the broker's `auth_gate` (`FaultGate`).

Tests of consumer-group code need the failures Kafka produces in production (a NOT_COORDINATOR in the middle of a
commit, a REBALANCE_IN_PROGRESS heartbeat, a slow JoinGroup) on demand. An injected error is answered in the shape
Kafka uses for that API's errors (`AbstractRequest.getErrorResponse`): per partition for OffsetCommit and Produce,
per group for DescribeGroups and DeleteGroups, per key for batched FindCoordinator, top level otherwise.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog

from broker.clock import BrokerClock
from broker.context import RequestContext
from broker.dispatch import Handler, Route
from broker.responses import error_response
from coordinator.persistence import AppendCallback, RecordLog
from coordinator.records import CoordinatorRecord, TransactionalProducer, TransactionMarker
from protocol.errors import ErrorCode
from protocol.registry import APIS

log = structlog.get_logger("toolkit.faults")


def _nothing() -> None:
    """The default `Faults.on_change`: nobody to tell."""


@dataclass(slots=True)
class ErrorRule:
    api_key: int
    error: ErrorCode
    remaining: int
    group_id: str | None = None
    client_id: str | None = None

    def matches(self, api_key: int, client_id: str | None, group_id: str | None) -> bool:
        return (
            self.api_key == api_key
            and (self.client_id is None or self.client_id == client_id)
            and (self.group_id is None or self.group_id == group_id)
        )


@dataclass(slots=True)
class LatencyRule:
    api_key: int
    delay_ms: int
    remaining: int | None = None


@dataclass(slots=True)
class MarkerRule:
    """A rule for the next rounds of transaction markers (of one transactional id, or any): fail them with `error`,
    or hold them back `delay_ms` on the broker clock. `remaining` None: until the faults are cleared."""

    remaining: int | None
    transactional_id: str | None = None
    error: ErrorCode | None = None
    delay_ms: int = 0

    def matches(self, transactional_id: str) -> bool:
        return self.transactional_id is None or self.transactional_id == transactional_id


TLS_HANDSHAKE = "tls_handshake"
SASL_AUTHENTICATION = "sasl_authentication"


@dataclass(slots=True)
class AuthRule:
    """Refuse the next `remaining` authentications at `stage` (a TLS handshake, or a SASL authentication once SASL
    is served), of one listener or any; a SASL rule may also name the client id, mechanism or username."""

    stage: str
    remaining: int
    listener: str | None = None
    client_id: str | None = None
    mechanism: str | None = None
    username: str | None = None

    def matches(self, stage: str, listener: str, **names: str | None) -> bool:
        wanted = {"client_id": self.client_id, "mechanism": self.mechanism, "username": self.username}
        return (
            self.stage == stage
            and (self.listener is None or self.listener.upper() == listener.upper())
            and all(value is None or value == names.get(key) for key, value in wanted.items())
        )


def _use(rules: list[Any], rule: ErrorRule | LatencyRule | MarkerRule | AuthRule) -> bool:
    """Consume one use of `rule`; True when that was its last (it is then removed from `rules`)."""
    if rule.remaining is None:
        return False
    rule.remaining -= 1
    if rule.remaining > 0:
        return False
    rules.remove(rule)
    return True


@dataclass(slots=True)
class Faults:
    """The rules in force: injected errors and latencies, errors for the next offsets appends, and marker rules."""

    errors: list[ErrorRule] = field(default_factory=list)
    latencies: list[LatencyRule] = field(default_factory=list)
    offsets_append_errors: list[ErrorCode] = field(default_factory=list)
    marker_errors: list[MarkerRule] = field(default_factory=list)
    marker_delays: list[MarkerRule] = field(default_factory=list)
    auth_failures: list[AuthRule] = field(default_factory=list)
    #: Told when the set of APIs with a rule changes (the dispatcher then leaves the fault middleware out of the
    #: chains of APIs without one).
    on_change: Callable[[], None] = _nothing

    def affects(self, api_key: int) -> bool:
        """Whether an error or latency rule names this API."""
        return any(rule.api_key == api_key for rule in self.errors) or any(
            rule.api_key == api_key for rule in self.latencies
        )

    def inject_error(
        self,
        api_key: int,
        error: int,
        count: int = 1,
        *,
        group_id: str | None = None,
        client_id: str | None = None,
    ) -> None:
        if api_key not in APIS:
            raise ValueError(f"unknown api key {api_key}")
        self.errors.append(ErrorRule(api_key, ErrorCode(error), count, group_id, client_id))
        self.on_change()

    def add_latency(self, api_key: int, delay_ms: int, count: int | None = None) -> None:
        self.latencies.append(LatencyRule(api_key, delay_ms, count))
        self.on_change()

    def fail_markers(self, error: ErrorCode, count: int, transactional_id: str | None = None) -> None:
        self.marker_errors.append(MarkerRule(count, transactional_id, error=error))

    def delay_markers(self, delay_ms: int, count: int | None, transactional_id: str | None = None) -> None:
        self.marker_delays.append(MarkerRule(count, transactional_id, delay_ms=delay_ms))

    def clear(self) -> None:
        self.errors.clear()
        self.latencies.clear()
        self.offsets_append_errors.clear()
        self.marker_errors.clear()
        self.marker_delays.clear()
        self.auth_failures.clear()
        self.on_change()

    def fail_authentications(self, rule: AuthRule) -> None:
        self.auth_failures.append(rule)

    def take_auth_failure(self, stage: str, listener: str, **names: str | None) -> AuthRule | None:
        """The rule refusing this authentication (one use of the first that matches), or None."""
        rule = next((r for r in self.auth_failures if r.matches(stage, listener, **names)), None)
        if rule is not None:
            _use(self.auth_failures, rule)
        return rule

    def take_marker_error(self, transactional_id: str) -> ErrorCode | None:
        """The error the next round of markers of this id fails with (one use of the first matching rule)."""
        rule = next((r for r in self.marker_errors if r.matches(transactional_id)), None)
        if rule is None:
            return None
        _use(self.marker_errors, rule)
        return rule.error

    def take_marker_delay_ms(self, transactional_id: str) -> int:
        """How long the next round of markers of this id is held back (one use of the first matching rule)."""
        rule = next((r for r in self.marker_delays if r.matches(transactional_id)), None)
        if rule is None:
            return 0
        _use(self.marker_delays, rule)
        return rule.delay_ms

    def take_error(self, api_key: int, client_id: str | None, request: Any) -> ErrorCode | None:
        """The error to answer this request with, consuming one use of the first matching rule."""
        if not self.errors:
            return None
        group_id = getattr(request, "group_id", None)
        for rule in self.errors:
            if rule.matches(api_key, client_id, group_id):
                if _use(self.errors, rule):
                    self.on_change()
                return rule.error
        return None

    def take_latency_ms(self, api_key: int) -> int:
        for rule in self.latencies:
            if rule.api_key == api_key:
                if _use(self.latencies, rule):
                    self.on_change()
                return rule.delay_ms
        return 0


class Sleeper:
    """Waits on the broker clock: a Ticking target of the broker's timer driver, so `advance` wakes it too."""

    def __init__(self, clock: BrokerClock, rearm: Any) -> None:
        self._clock = clock
        self._rearm = rearm
        self._waiting: list[tuple[int, Callable[[], None]]] = []

    def call_later_ms(self, delay_ms: int, callback: Callable[[], None]) -> None:
        """Call `callback` once the broker clock has moved `delay_ms` on (with a frozen clock: by `advance`)."""
        self._waiting.append((self._clock.monotonic_ms() + delay_ms, callback))
        self._rearm()

    async def sleep_ms(self, delay_ms: int) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.call_later_ms(delay_ms, lambda: None if future.done() else future.set_result(None))
        await future

    def next_deadline_ms(self) -> int | None:
        return min((deadline for deadline, _ in self._waiting), default=None)

    def tick(self, now_ms: int) -> None:
        due = [(d, c) for d, c in self._waiting if d <= now_ms]
        self._waiting = [(d, c) for d, c in self._waiting if d > now_ms]
        for _, callback in due:
            try:
                callback()
            except Exception:  # one failing callback must not keep the others waiting
                log.exception("faults.delayed_callback_failed")


class FaultMiddleware:
    """The dispatch middleware: wait out an injected latency, then answer an injected error or pass on."""

    def __init__(self, faults: Faults, sleeper: Sleeper) -> None:
        self._faults = faults
        self._sleeper = sleeper

    def wraps(self, route: Route) -> bool:
        """Only APIs with a rule go through this middleware (the dispatcher asks again after `Faults.on_change`)."""
        return self._faults.affects(route.api_key)

    async def __call__(self, ctx: RequestContext, route: Route, request: Any, call_next: Handler) -> Any:
        faults = self._faults
        api_key = route.api_key
        if faults.latencies and (delay_ms := faults.take_latency_ms(api_key)):
            await self._sleeper.sleep_ms(delay_ms)
        error = faults.take_error(api_key, ctx.client_id, request) if faults.errors else None
        if error is not None:
            return error_response(api_key, ctx.api_version, request, error)
        return await call_next(ctx, request)


class FailingRecordLog:
    """Wraps the coordinator's record log: the next appends fail with the queued errors, as a failed write to
    `__consumer_offsets` would, and the coordinator remaps them as Kafka does."""

    def __init__(self, inner: RecordLog, faults: Faults) -> None:
        self._inner = inner
        self._faults = faults

    def append(
        self,
        partition: int,
        records: Sequence[CoordinatorRecord],
        on_durable: AppendCallback,
        producer: TransactionalProducer | None = None,
    ) -> None:
        if self._faults.offsets_append_errors:
            on_durable(self._faults.offsets_append_errors.pop(0))
            return
        self._inner.append(partition, records, on_durable, producer)

    def append_marker(self, partition: int, marker: TransactionMarker, on_durable: AppendCallback) -> None:
        """Transaction markers pass through (marker faults are the transaction coordinator's)."""
        self._inner.append_marker(partition, marker, on_durable)


class FaultGate:
    """The broker's `auth_gate` (`broker/auth_gate.py`) while the toolkit is attached: refuses the authentications
    the `AuthRule`s name, each refusal saying which control caused it."""

    def __init__(self, faults: Faults) -> None:
        self._faults = faults

    def tls_handshake(self, listener: str, peer: str) -> str | None:
        if not self._faults.auth_failures:
            return None
        rule = self._faults.take_auth_failure(TLS_HANDSHAKE, listener)
        return None if rule is None else "injected by the toolkit (fail_next_handshakes)"

    def authentication(self, listener: str, client_id: str | None, mechanism: str, username: str) -> str | None:
        if not self._faults.auth_failures:
            return None
        names = {"client_id": client_id, "mechanism": mechanism, "username": username}
        rule = self._faults.take_auth_failure(SASL_AUTHENTICATION, listener, **names)
        return None if rule is None else "injected by the toolkit (fail_next_authentications)"
