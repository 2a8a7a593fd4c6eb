"""KIP-714's client instances as Kafka 4.4 keeps them without a metrics plugin (broker.telemetry): no sockets, the
clock passed in."""

from __future__ import annotations

import itertools
import uuid

from broker.telemetry import (
    EXPIRY_MS,
    MAX_INSTANCES,
    PUSH_INTERVAL_MS,
    TELEMETRY_MAX_BYTES,
    ClientTelemetry,
    java_uuid_hash,
    subscription_id,
)
from protocol.errors import ErrorCode

ZERO = uuid.UUID(int=0)
CONN = 7


def counting_ids() -> ClientTelemetry:
    """New client instance ids 1:..., 2:..., in order (never the reserved 0 and 1)."""
    counter = itertools.count(2)
    return ClientTelemetry(lambda: uuid.UUID(int=next(counter) << 64))


def test_the_subscription_id_is_kafkas_for_the_same_instance() -> None:
    # Kafka 4.4's answer to a GetTelemetrySubscriptions, seen from the reference broker.
    instance = uuid.UUID("e7417743-491c-4a07-bfe3-17448ddb8621")
    assert subscription_id(instance) == 1218639871


def test_java_uuid_hash_matches_java_for_the_halves_xor() -> None:
    # Uuid(1, 2).hashCode(): h = 1 ^ 2 = 3, (int)(h >> 32) ^ (int) h = 3
    assert java_uuid_hash(uuid.UUID(int=(1 << 64) | 2)) == 3
    # the sign bit of the folded value survives as a negative int32
    assert java_uuid_hash(uuid.UUID(int=0x80000000)) == -(2**31)


def test_a_new_client_gets_an_id_and_asking_again_early_is_throttled() -> None:
    telemetry = counting_ids()
    first = telemetry.get_subscriptions(ZERO, CONN, now_ms=0)
    assert (first.error, first.client_instance_id, first.created) == (ErrorCode.NONE, uuid.UUID(int=2 << 64), True)
    assert first.subscription_id == subscription_id(first.client_instance_id)
    again = telemetry.get_subscriptions(first.client_instance_id, CONN, now_ms=PUSH_INTERVAL_MS - 1)
    assert again.error == ErrorCode.THROTTLING_QUOTA_EXCEEDED
    later = telemetry.get_subscriptions(first.client_instance_id, CONN, now_ms=2 * PUSH_INTERVAL_MS - 1)
    assert (later.error, later.created) == (ErrorCode.NONE, False)


def test_every_zero_id_request_is_a_new_instance_and_ids_never_repeat() -> None:
    repeated = iter([uuid.UUID(int=5), uuid.UUID(int=5), uuid.UUID(int=6)])
    telemetry = ClientTelemetry(lambda: next(repeated))
    assert telemetry.get_subscriptions(ZERO, CONN, 0).client_instance_id == uuid.UUID(int=5)
    assert telemetry.get_subscriptions(ZERO, CONN, 0).client_instance_id == uuid.UUID(int=6)


def test_a_push_right_after_the_subscription_is_accepted_the_next_one_throttled_unless_terminating() -> None:
    telemetry = counting_ids()
    got = telemetry.get_subscriptions(ZERO, CONN, 1000)
    instance, sub = got.client_instance_id, got.subscription_id
    assert telemetry.push(instance, sub, False, 0, 10, CONN, 1001) == ErrorCode.NONE
    assert telemetry.push(instance, sub, False, 0, 10, CONN, 1002) == ErrorCode.THROTTLING_QUOTA_EXCEEDED
    assert telemetry.push(instance, sub, False, 0, 10, CONN, 1001 + PUSH_INTERVAL_MS) == ErrorCode.NONE
    assert telemetry.push(instance, sub, True, 0, 10, CONN, 1002 + PUSH_INTERVAL_MS) == ErrorCode.NONE
    assert telemetry.push(instance, sub, True, 0, 10, CONN, 1003 + PUSH_INTERVAL_MS) == ErrorCode.INVALID_REQUEST


def test_push_checks_in_kafkas_order() -> None:
    telemetry = counting_ids()
    assert telemetry.push(ZERO, 0, False, 0, 0, CONN, 0) == ErrorCode.INVALID_REQUEST
    assert telemetry.push(uuid.UUID(int=1), 0, False, 0, 0, CONN, 0) == ErrorCode.INVALID_REQUEST
    cases = (
        (lambda sub: (sub + 1, 9, TELEMETRY_MAX_BYTES + 1), ErrorCode.UNKNOWN_SUBSCRIPTION_ID),
        (lambda sub: (sub, 9, TELEMETRY_MAX_BYTES + 1), ErrorCode.UNSUPPORTED_COMPRESSION_TYPE),
        (lambda sub: (sub, 4, TELEMETRY_MAX_BYTES + 1), ErrorCode.TELEMETRY_TOO_LARGE),
        (lambda sub: (sub, 4, TELEMETRY_MAX_BYTES), ErrorCode.NONE),
    )
    for make, error in cases:
        got = telemetry.get_subscriptions(ZERO, CONN, 0)
        subscription, compression, size = make(got.subscription_id)
        assert telemetry.push(got.client_instance_id, subscription, False, compression, size, CONN, 1) == error


def test_after_a_refused_subscription_or_compression_asking_again_is_not_throttled() -> None:
    telemetry = counting_ids()
    stranger = uuid.UUID(int=99 << 64)
    assert telemetry.push(stranger, 1, False, 0, 0, CONN, 0) == ErrorCode.UNKNOWN_SUBSCRIPTION_ID
    assert telemetry.get_subscriptions(stranger, CONN, 1).error == ErrorCode.NONE
    assert telemetry.get_subscriptions(stranger, CONN, 2).error == ErrorCode.THROTTLING_QUOTA_EXCEEDED


def test_an_instance_is_forgotten_with_its_connection() -> None:
    telemetry = counting_ids()
    instance = telemetry.get_subscriptions(ZERO, CONN, 0).client_instance_id
    telemetry.forget_connections_except({CONN})
    assert telemetry.get_subscriptions(instance, CONN, 1).error == ErrorCode.THROTTLING_QUOTA_EXCEEDED
    telemetry.forget_connections_except({CONN + 1})
    assert len(telemetry) == 0
    assert telemetry.get_subscriptions(instance, CONN + 1, 2).created


def test_an_instance_expires_three_push_intervals_after_its_last_request() -> None:
    telemetry = counting_ids()
    instance = telemetry.get_subscriptions(ZERO, CONN, 0).client_instance_id
    telemetry.get_subscriptions(ZERO, CONN, EXPIRY_MS - 1)
    assert len(telemetry) == 2
    again = telemetry.get_subscriptions(instance, CONN, EXPIRY_MS)
    assert (again.error, again.created) == (ErrorCode.NONE, True)


def test_the_least_recently_used_instance_goes_past_the_cache_size() -> None:
    telemetry = counting_ids()
    first = telemetry.get_subscriptions(ZERO, CONN, 0).client_instance_id
    for _ in range(MAX_INSTANCES):
        telemetry.get_subscriptions(ZERO, CONN, 1)
    assert len(telemetry) == MAX_INSTANCES
    assert telemetry.get_subscriptions(first, CONN, 2).created
