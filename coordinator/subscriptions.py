"""Which topics a consumer group is subscribed to, read from its members' ConsumerProtocol subscriptions (#43, #36).

Kafka parses the JoinGroup metadata of "consumer" groups to protect offsets that are still in use: OffsetDelete
refuses subscribed topics (GROUP_SUBSCRIBED_TO_TOPIC) and the retention sweep of a Stable group expires only
offsets of topics nobody subscribes to. Parsing is done when a generation starts and when a group is loaded.

The decoder is injected (`protocol.consumer_protocol.decode_subscription` in the broker) because the codec
internals it uses are off limits to this sans-IO package (import-linter). Without a decoder, or when any
member's subscription fails to parse, the set is unknown (None), which OffsetDelete reads as "subscribed to
every topic" and retention as "expire nothing while Stable", Kafka's conservative reading.
"""

from __future__ import annotations

from collections.abc import Callable

from coordinator.group import ClassicGroup
from protocol.errors import DecodeError
from protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription

SubscriptionDecoder = Callable[[bytes], ConsumerProtocolSubscription]


def compute_subscribed_topics(group: ClassicGroup, decode: SubscriptionDecoder | None) -> frozenset[str] | None:
    """The union of the members' subscribed topics, empty for a member-less consumer group, None if unknown."""
    if not group.uses_consumer_protocol:
        return None
    if not group.members:
        return frozenset()
    protocol = group.protocol_name
    if protocol is None or decode is None:
        return None
    topics: set[str] = set()
    try:
        for member in group.members.values():
            topics.update(decode(member.metadata(protocol)).topics)
    except (DecodeError, KeyError, ValueError):
        return None
    return frozenset(topics)
