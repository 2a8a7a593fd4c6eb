"""Computing a consumer group's target assignment (Kafka's `TargetAssignmentBuilder`) and the assignor it uses.

The target is a pure function of the members' subscriptions, the subscribed topics' partition counts and the
previous target (the assignors are sticky), so replaying the same records after a restart gives the same answer.
Only members whose share changed, or who had no target yet, get a TargetAssignmentMember record (Kafka's
TargetAssignmentBuilder writes one for a member new to the target even when its share is empty).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from coordinator.consumer_group.assignor_spec import GroupSpec, MemberAssignment, MemberSpec
from coordinator.consumer_group.assignors import ASSIGNORS
from coordinator.consumer_group.group import ConsumerGroup


@dataclass(frozen=True, slots=True)
class TargetAssignment:
    """The new target (member id -> topic id -> partitions) and the members whose share changed."""

    assignment: Mapping[str, MemberAssignment]
    changed: tuple[str, ...]


def preferred_assignor(group: ConsumerGroup, configured: tuple[str, ...]) -> str:
    """The assignor most members ask for (ServerAssignor); with none asked for, the first configured one
    (`group.consumer.assignors`). Ties go to the configured order, so the choice never depends on dict order."""
    counts = Counter(m.server_assignor for m in group.members.values() if m.server_assignor is not None)
    if not counts:
        return configured[0]
    best = max(counts.values())
    tied = [name for name, count in counts.items() if count == best]
    ranked = sorted(tied, key=lambda name: (configured.index(name) if name in configured else len(configured), name))
    return ranked[0]


def compute_target(group: ConsumerGroup, assignor: str) -> TargetAssignment:
    """Run `assignor` over the group's members, with each member's previous target as its current assignment."""
    metadata = group.subscription_metadata
    members: dict[str, MemberSpec] = {}
    for member_id, member in group.members.items():
        topic_ids = frozenset(
            metadata[name].topic_id for name in group.subscribed_topic_names(member) if name in metadata
        )
        members[member_id] = MemberSpec(topic_ids, group.target_of(member_id), member.instance_id, member.rack_id)
    partition_counts = {image.topic_id: image.partitions for image in metadata.values()}
    assignment = ASSIGNORS[assignor](GroupSpec(members), partition_counts)
    changed = tuple(
        member_id
        for member_id in group.members
        if member_id not in group.target or dict(assignment.get(member_id, {})) != dict(group.target_of(member_id))
    )
    return TargetAssignment(assignment, changed)
