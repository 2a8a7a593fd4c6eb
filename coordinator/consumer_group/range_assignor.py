"""The `range` assignor (Kafka's server-side RangeAssignor, Kafka 4): contiguous partition ranges per topic.

For each topic, its subscribers in a fixed order each take the next range of P // S partitions, the first P % S
of them one more. With the same subscribers on every topic and the same partition counts, a member gets the same
partition numbers of every topic: co-partitioning, which joins in streams applications need.

Stickiness is Kafka's and no more: the current assignment is not read. The order is static members first by
`group.instance.id`, then the others by member id, so a static member that restarts (new member id, same instance
id) gets the same ranges back as long as members, subscriptions and partition counts are unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping

from coordinator.consumer_group.assignor_spec import GroupAssignment, GroupSpec, TopicKey, freeze


def _member_order(group: GroupSpec) -> list[str]:
    """Members with an instance id first (by instance id), then the rest by member id, as Kafka sorts them."""

    def key(member_id: str) -> tuple[int, str, str]:
        instance_id = group.members[member_id].instance_id
        return (0, instance_id, member_id) if instance_id is not None else (1, member_id, member_id)

    return sorted(group.members, key=key)


def assign_range(group: GroupSpec, partition_counts: Mapping[TopicKey, int]) -> GroupAssignment:
    """Target assignment by ranges; topics must exist in `partition_counts` (checked by the caller)."""
    order = _member_order(group)
    target: dict[str, dict[TopicKey, list[int]]] = {member_id: {} for member_id in order}
    subscribers_of: dict[TopicKey, list[str]] = {}
    for member_id in order:
        for topic in group.members[member_id].subscribed_topics:
            subscribers_of.setdefault(topic, []).append(member_id)
    for topic, subscribers in sorted(subscribers_of.items()):
        share, extra = divmod(partition_counts[topic], len(subscribers))
        start = 0
        for rank, member_id in enumerate(subscribers):
            end = start + share + (1 if rank < extra else 0)
            target[member_id][topic] = list(range(start, end))
            start = end
    return freeze(target, order)
