"""The classic consumer protocol's opaque blobs: JoinGroup subscription metadata and SyncGroup assignments.

The coordinator never needs these to run a group (assignment happens in the clients), but it reads subscriptions
to know which topics a group is subscribed to (OffsetDelete, offset retention) and tools print assignments.
Readers accept newer versions than they know, as Kafka's `ConsumerProtocol` does.
"""

from __future__ import annotations

from protocol.messages.consumer_protocol_assignment import (
    CONSUMER_PROTOCOL_ASSIGNMENT,
    ConsumerProtocolAssignment,
)
from protocol.messages.consumer_protocol_subscription import (
    CONSUMER_PROTOCOL_SUBSCRIPTION,
    ConsumerProtocolSubscription,
)
from protocol.versioned import decode_versioned, encode_versioned


def decode_subscription(data: bytes) -> ConsumerProtocolSubscription:
    value: ConsumerProtocolSubscription = decode_versioned(
        CONSUMER_PROTOCOL_SUBSCRIPTION, data, clamp=True, strict_end=False
    )[1]
    return value


def encode_subscription(value: ConsumerProtocolSubscription, version: int = 3) -> bytes:
    return encode_versioned(CONSUMER_PROTOCOL_SUBSCRIPTION, version, value)


def decode_assignment(data: bytes) -> ConsumerProtocolAssignment:
    value: ConsumerProtocolAssignment = decode_versioned(
        CONSUMER_PROTOCOL_ASSIGNMENT, data, clamp=True, strict_end=False
    )[1]
    return value


def encode_assignment(value: ConsumerProtocolAssignment, version: int = 3) -> bytes:
    return encode_versioned(CONSUMER_PROTOCOL_ASSIGNMENT, version, value)
