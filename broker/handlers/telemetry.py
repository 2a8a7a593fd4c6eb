"""GetTelemetrySubscriptions and PushTelemetry (KIP-714), served but not advertised, as Kafka 4.4 does without a
metrics plugin: clients see no telemetry support in ApiVersions and never probe, and one that asks anyway gets
Kafka's answers (broker.telemetry)."""

from __future__ import annotations

from collections.abc import Callable, Collection

import structlog

from broker.clock import BrokerClock
from broker.context import RequestContext
from broker.dispatch import Dispatcher
from broker.telemetry import ACCEPTED_COMPRESSION_TYPES, PUSH_INTERVAL_MS, TELEMETRY_MAX_BYTES, ClientTelemetry
from protocol.errors import ErrorCode
from protocol.messages.get_telemetry_subscriptions import (
    GetTelemetrySubscriptionsRequest,
    GetTelemetrySubscriptionsResponse,
)
from protocol.messages.push_telemetry import PushTelemetryRequest, PushTelemetryResponse
from protocol.registry import ApiKey

log = structlog.get_logger("broker.telemetry")


class TelemetryHandlers:
    """`live_connections` names the open connections, so instances of closed ones are forgotten."""

    def __init__(self, clock: BrokerClock, live_connections: Callable[[], Collection[int]]) -> None:
        self._clock = clock
        self._live = live_connections
        self.clients = ClientTelemetry()

    def register(self, d: Dispatcher) -> None:
        d.register(ApiKey.GET_TELEMETRY_SUBSCRIPTIONS, self.get_telemetry_subscriptions, advertise=False)
        d.register(ApiKey.PUSH_TELEMETRY, self.push_telemetry, advertise=False)

    async def get_telemetry_subscriptions(
        self, ctx: RequestContext, request: GetTelemetrySubscriptionsRequest
    ) -> GetTelemetrySubscriptionsResponse:
        self.clients.forget_connections_except(self._live())
        answer = self.clients.get_subscriptions(
            request.client_instance_id, ctx.session.conn_id, self._clock.monotonic_ms()
        )
        if answer.error != ErrorCode.NONE:
            return GetTelemetrySubscriptionsResponse(error_code=answer.error)
        if answer.created:
            log.info("telemetry.client_instance_added", client_instance_id=str(answer.client_instance_id))
        return GetTelemetrySubscriptionsResponse(
            client_instance_id=answer.client_instance_id,
            subscription_id=answer.subscription_id,
            accepted_compression_types=list(ACCEPTED_COMPRESSION_TYPES),
            push_interval_ms=PUSH_INTERVAL_MS,
            telemetry_max_bytes=TELEMETRY_MAX_BYTES,
            delta_temporality=True,
            requested_metrics=[],
        )

    async def push_telemetry(self, ctx: RequestContext, request: PushTelemetryRequest) -> PushTelemetryResponse:
        self.clients.forget_connections_except(self._live())
        error = self.clients.push(
            request.client_instance_id,
            request.subscription_id,
            request.terminating,
            request.compression_type,
            len(request.metrics),
            ctx.session.conn_id,
            self._clock.monotonic_ms(),
        )
        return PushTelemetryResponse(error_code=error)
