"""KIP-714 client telemetry as a Kafka 4.4 broker without a metrics plugin answers it (sans-IO, clock passed in).

Without a `ClientTelemetryExporter` plugin Kafka does not advertise GetTelemetrySubscriptions or PushTelemetry, so
librdkafka and the Java client never send them; the broker still answers a client that sends them anyway, from
its `ClientMetricsManager` with no subscriptions configured. This is that manager, reduced to what it does then:

- GetTelemetrySubscriptions hands out a client instance id (when asked with the zero id), an empty subscription
  (no metrics requested, Kafka's default push interval of 5 minutes), its subscription id (CRC32C of the metric
  set and interval XOR the id's Java hash), the compression types Kafka accepts and `telemetry.max.bytes`.
  Asked again before the push interval passed: THROTTLING_QUOTA_EXCEEDED.
- PushTelemetry checks what Kafka checks, in Kafka's order (a reserved client id, a push after `terminating`, a
  push before the interval, the subscription id, the compression type, the size) and drops the metrics (there is
  no plugin to export them to).

A client instance is forgotten when its connection closes or after three push intervals without a request, and at
most `MAX_INSTANCES` are kept (least recently used evicted), as Kafka's cache does.
"""

from __future__ import annotations

import struct
import uuid
from collections import OrderedDict
from collections.abc import Callable, Collection
from dataclasses import dataclass

from protocol import checksum as crc32c
from protocol.errors import ErrorCode

#: ClientMetricsConfigs.INTERVAL_MS_DEFAULT: the push interval when no subscription sets one.
PUSH_INTERVAL_MS = 300_000
#: `telemetry.max.bytes`' default: the largest metrics payload a push may carry.
TELEMETRY_MAX_BYTES = 1_048_576
#: What Kafka accepts, in its order of preference: ZSTD, LZ4, GZIP, SNAPPY.
ACCEPTED_COMPRESSION_TYPES = (4, 3, 1, 2)
#: Kafka's CompressionType ids (none, gzip, snappy, lz4, zstd): a push with another id is refused.
KNOWN_COMPRESSION_TYPES = frozenset(range(5))
#: Kafka's client instance cache: 16k instances, each kept at least a minute (three push intervals here).
MAX_INSTANCES = 16_384
EXPIRY_MS = max(60_000, 3 * PUSH_INTERVAL_MS)
#: Uuid.RESERVED: ids no client instance may have (the zero id and the metadata topic's id).
ZERO_UUID = uuid.UUID(int=0)
RESERVED_IDS = frozenset({ZERO_UUID, uuid.UUID(int=1)})
#: A request time before any other: a new instance's first Get or push is never early.
NEVER = -(1 << 62)


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def java_uuid_hash(value: uuid.UUID) -> int:
    """org.apache.kafka.common.Uuid.hashCode: the two halves XORed, then the 64-bit result's halves XORed."""
    most, least = struct.unpack(">qq", value.bytes)
    mixed = most ^ least
    return _int32(mixed >> 32) ^ _int32(mixed)


def subscription_id(client_instance_id: uuid.UUID) -> int:
    """ClientMetricsManager.computeSubscriptionId: CRC32C of the subscribed metric set's Java `toString` (`[]`,
    none) followed by the push interval, XOR the client instance id's Java hash."""
    text = f"[]{PUSH_INTERVAL_MS}".encode()
    return _int32(_int32(crc32c.crc32c(text)) ^ java_uuid_hash(client_instance_id))


@dataclass(slots=True)
class ClientInstance:
    """One client instance's telemetry state (Kafka's ClientMetricsInstance)."""

    client_instance_id: uuid.UUID
    connection: int
    subscription_id: int
    last_request_ms: int
    last_get_ms: int = NEVER
    last_push_ms: int = NEVER
    last_error: ErrorCode = ErrorCode.NONE
    terminating: bool = False

    def may_get(self, now_ms: int) -> bool:
        """A Get is accepted once a push interval passed since the last request of either kind."""
        if now_ms - max(self.last_get_ms, self.last_push_ms) >= PUSH_INTERVAL_MS:
            self.last_get_ms = now_ms
            return True
        return False

    def may_push(self, now_ms: int) -> bool:
        """A push right after a Get is accepted early (clients add jitter to the interval), otherwise once a push
        interval passed since the last request."""
        accepted = self.last_get_ms > self.last_push_ms or (
            now_ms - max(self.last_get_ms, self.last_push_ms) >= PUSH_INTERVAL_MS
        )
        if accepted:
            self.last_push_ms = now_ms
        return accepted


@dataclass(frozen=True, slots=True)
class Subscription:
    """A GetTelemetrySubscriptions answer: an error alone, or the instance's (empty) subscription."""

    error: ErrorCode
    client_instance_id: uuid.UUID = ZERO_UUID
    subscription_id: int = 0
    created: bool = False
    """Whether this request created the client instance."""


class ClientTelemetry:
    """Every client instance the broker heard from; `now_ms` is monotonic, `new_id` draws a random id."""

    def __init__(self, new_id: Callable[[], uuid.UUID] = uuid.uuid4) -> None:
        self._new_id = new_id
        self._instances: OrderedDict[uuid.UUID, ClientInstance] = OrderedDict()

    def __len__(self) -> int:
        return len(self._instances)

    def forget_connections_except(self, live: Collection[int]) -> None:
        """Kafka forgets a client instance when the connection that created it closes."""
        for instance_id, instance in list(self._instances.items()):
            if instance.connection not in live:
                del self._instances[instance_id]

    def get_subscriptions(self, requested_id: uuid.UUID, connection: int, now_ms: int) -> Subscription:
        instance_id = requested_id
        if instance_id == ZERO_UUID:
            instance_id = self._new_id()
            while instance_id in self._instances:
                instance_id = self._new_id()
        instance, created = self._instance(instance_id, connection, now_ms)
        # Kafka lets a client whose push failed on its subscription or compression ask again at once.
        retry = instance.last_error in (ErrorCode.UNKNOWN_SUBSCRIPTION_ID, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE)
        if not instance.may_get(now_ms) and not retry:
            return Subscription(ErrorCode.THROTTLING_QUOTA_EXCEEDED)
        instance.last_error = ErrorCode.NONE
        return Subscription(ErrorCode.NONE, instance_id, instance.subscription_id, created)

    def push(
        self,
        client_instance_id: uuid.UUID,
        subscription: int,
        terminating: bool,
        compression_type: int,
        metrics_size: int,
        connection: int,
        now_ms: int,
    ) -> ErrorCode:
        """The push's error (NONE when accepted); the metrics themselves are dropped, as with no plugin."""
        if client_instance_id in RESERVED_IDS:
            return ErrorCode.INVALID_REQUEST
        instance, _ = self._instance(client_instance_id, connection, now_ms)
        error = self._push_error(instance, subscription, terminating, compression_type, metrics_size, now_ms)
        instance.terminating = terminating
        instance.last_error = error
        return error

    @staticmethod
    def _push_error(
        instance: ClientInstance,
        subscription: int,
        terminating: bool,
        compression_type: int,
        metrics_size: int,
        now_ms: int,
    ) -> ErrorCode:
        if instance.terminating:
            return ErrorCode.INVALID_REQUEST
        if not instance.may_push(now_ms) and not terminating:
            return ErrorCode.THROTTLING_QUOTA_EXCEEDED
        if subscription != instance.subscription_id:
            return ErrorCode.UNKNOWN_SUBSCRIPTION_ID
        if compression_type not in KNOWN_COMPRESSION_TYPES:
            return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
        if metrics_size > TELEMETRY_MAX_BYTES:
            return ErrorCode.TELEMETRY_TOO_LARGE
        return ErrorCode.NONE

    def _instance(self, instance_id: uuid.UUID, connection: int, now_ms: int) -> tuple[ClientInstance, bool]:
        """The cached instance, or a new one for this connection (then True). Expired instances go first: the
        cache is in order of last request (least recent first), so they are at its front."""
        while self._instances:
            oldest = next(iter(self._instances.values()))
            if now_ms - oldest.last_request_ms < EXPIRY_MS:
                break
            del self._instances[oldest.client_instance_id]
        instance = self._instances.get(instance_id)
        created = instance is None
        if instance is None:
            instance = ClientInstance(instance_id, connection, subscription_id(instance_id), now_ms)
            self._instances[instance_id] = instance
            if len(self._instances) > MAX_INSTANCES:
                self._instances.popitem(last=False)
        else:
            self._instances.move_to_end(instance_id)
        instance.last_request_ms = now_ms
        return instance, created
