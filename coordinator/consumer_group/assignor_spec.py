"""What a server-side assignor reads and returns, as Kafka's GroupSpec / SubscribedTopicDescriber / GroupAssignment.

Kept apart from the algorithms so the coordinator can build a spec without importing them, and so every assignor
shares one validation of its input (unknown topics, stale partitions) instead of repeating it.

Topics are named by one opaque, ordered string (a topic id or a topic name: the caller decides, as long as the
spec and the metadata agree). Ordering by that string and by member id is what makes every assignor
deterministic: the same spec gives the same assignment whatever order the mappings were built in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

TopicKey = str
"""A topic id or name: whichever the caller uses, consistently, in subscriptions, assignments and metadata."""

MemberAssignment = Mapping[TopicKey, frozenset[int]]
"""Partitions per topic; a topic with no partition is left out."""

GroupAssignment = Mapping[str, MemberAssignment]
"""Member id -> its target assignment; every member of the spec has an entry, possibly empty."""

EMPTY_ASSIGNMENT: MemberAssignment = MappingProxyType({})


class PartitionAssignorError(Exception):
    """The spec cannot be assigned (Kafka's PartitionAssignorException), e.g. a subscribed topic is unknown."""


@dataclass(frozen=True)
class MemberSpec:
    """One member as the assignor sees it: what it subscribes to and what it owns in the current target.

    `rack` is accepted for the shape of Kafka's spec but no assignor here is rack-aware (Kafka's behaviour when
    no rack information is available, which is the case for group-broker's single-node cluster).
    """

    subscribed_topics: frozenset[TopicKey]
    assignment: MemberAssignment = field(default_factory=lambda: EMPTY_ASSIGNMENT)
    instance_id: str | None = None
    rack: str | None = None

    @staticmethod
    def of(
        topics: Iterable[TopicKey],
        assignment: Mapping[TopicKey, Iterable[int]] | None = None,
        instance_id: str | None = None,
    ) -> MemberSpec:
        """A spec from plain collections (tests and callers need not build frozensets themselves)."""
        owned = {topic: frozenset(parts) for topic, parts in (assignment or {}).items() if parts}
        return MemberSpec(frozenset(topics), MappingProxyType(owned), instance_id)


@dataclass(frozen=True)
class GroupSpec:
    """All members of a group, keyed by member id."""

    members: Mapping[str, MemberSpec]

    def member_ids(self) -> list[str]:
        """Member ids in ascending order: the one iteration order every assignor uses."""
        return sorted(self.members)

    def is_homogeneous(self) -> bool:
        """True when every member subscribes to the same topics (Kafka's SubscriptionType.HOMOGENEOUS)."""
        return len({member.subscribed_topics for member in self.members.values()}) <= 1

    def subscribed_topics(self) -> list[TopicKey]:
        """The union of all subscriptions, in ascending order."""
        return sorted({topic for member in self.members.values() for topic in member.subscribed_topics})


def check_topics_exist(group: GroupSpec, partition_counts: Mapping[TopicKey, int]) -> None:
    """Refuse a spec whose members subscribe to a topic missing from the metadata, as Kafka's assignors do."""
    for topic in group.subscribed_topics():
        if topic not in partition_counts:
            raise PartitionAssignorError(f"members are subscribed to topic {topic!r}, unknown in the topic metadata")


def kept_partitions(group: GroupSpec, partition_counts: Mapping[TopicKey, int]) -> dict[str, dict[TopicKey, list[int]]]:
    """Each member's current partitions that it may keep: subscribed topics, partitions that still exist, each
    partition once (the first member in id order wins a duplicate claim). Ascending topics and partitions.

    The current assignment is the previous target, so it is normally disjoint and in range; the clean-up keeps a
    damaged or stale input (a topic recreated with fewer partitions) from producing a partition twice or one
    that does not exist.
    """
    claimed: set[tuple[TopicKey, int]] = set()
    kept: dict[str, dict[TopicKey, list[int]]] = {}
    for member_id in group.member_ids():
        member = group.members[member_id]
        own: dict[TopicKey, list[int]] = {}
        for topic in sorted(member.assignment):
            if topic not in member.subscribed_topics:
                continue
            count = partition_counts.get(topic, 0)
            parts = [p for p in sorted(member.assignment[topic]) if 0 <= p < count and (topic, p) not in claimed]
            claimed.update((topic, p) for p in parts)
            if parts:
                own[topic] = parts
        kept[member_id] = own
    return kept


def freeze(assignment: Mapping[str, Mapping[TopicKey, Iterable[int]]], member_ids: Iterable[str]) -> GroupAssignment:
    """The immutable result: one entry per member (ascending), empty topics left out."""
    return MappingProxyType(
        {
            member_id: MappingProxyType(
                {topic: frozenset(parts) for topic, parts in sorted(assignment.get(member_id, {}).items()) if parts}
            )
            for member_id in sorted(member_ids)
        }
    )
