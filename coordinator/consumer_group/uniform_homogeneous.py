"""The `uniform` assignor for a group whose members all subscribe to the same topics (Kafka's
UniformHomogeneousAssignmentBuilder): balance first, then stickiness.

Balance: with P partitions and M members every member gets P // M partitions and the first P % M members (in
member-id order) one more. Stickiness: a member keeps what it owns up to its quota; only the surplus and the
partitions nobody owns are handed out, to the members below quota, in member-id order. So a member that joins takes
partitions only from members above the new quota, and a member that leaves frees only its own partitions.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import islice

from coordinator.consumer_group.assignor_spec import GroupAssignment, GroupSpec, TopicKey, freeze, kept_partitions


def assign_homogeneous(group: GroupSpec, partition_counts: Mapping[TopicKey, int]) -> GroupAssignment:
    """Target assignment of a homogeneous group; topics must exist in `partition_counts` (checked by the caller)."""
    member_ids = group.member_ids()
    topics = sorted(group.members[member_ids[0]].subscribed_topics) if member_ids else []
    total = sum(partition_counts[topic] for topic in topics)
    kept = kept_partitions(group, partition_counts)
    owned = {(topic, p) for own in kept.values() for topic, parts in own.items() for p in parts}
    unassigned = [(topic, p) for topic in topics for p in range(partition_counts[topic]) if (topic, p) not in owned]

    minimum, extra = divmod(total, len(member_ids)) if member_ids else (0, 0)
    target: dict[str, dict[TopicKey, list[int]]] = {}
    room: list[tuple[str, int]] = []
    for index, member_id in enumerate(member_ids):
        quota = minimum + (1 if index < extra else 0)
        own: dict[TopicKey, list[int]] = {}
        for topic, parts in kept[member_id].items():
            own[topic] = parts[:quota]
            unassigned.extend((topic, p) for p in parts[quota:])
            quota -= len(own[topic])
        target[member_id] = own
        if quota > 0:
            room.append((member_id, quota))

    pending = iter(unassigned)
    for member_id, quota in room:
        for topic, partition in islice(pending, quota):
            target[member_id].setdefault(topic, []).append(partition)
    return freeze(target, member_ids)
