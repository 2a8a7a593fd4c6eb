"""Read-only views of a consumer group for operators and tests: each member's current and target assignment by
topic name, its timers, and what its reconciliation is waiting for.

The toolkit's group snapshot, its frozen-time wait and the timeline all want the same answer to "why is this
group not Stable?": in the consumer protocol a member waits either for itself (it must revoke partitions before
it may advance) or for another member (a partition of its target is still held by its previous owner). The view
names both, with the partitions, so nobody has to read epochs and owner maps to find out.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

from coordinator.consumer_group.group import ConsumerGroup
from coordinator.consumer_group.keys import revocation_key, session_key
from coordinator.consumer_group.member import ConsumerGroupMember
from coordinator.consumer_group.member_state import Partitions
from coordinator.consumer_group.records import assignment_partitions, by_topic

NamedPartitions = dict[str, list[int]]
"""topic name -> partitions, ascending (the topic id when the name is unknown)."""


@dataclass(frozen=True, slots=True)
class ConsumerMemberView:
    """One consumer-protocol member as an operator sees it."""

    member_id: str
    instance_id: str | None
    client_id: str
    client_host: str
    member_epoch: int
    state: str
    """Kafka's MemberState name: STABLE, UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS."""
    assigned: NamedPartitions
    pending_revocation: NamedPartitions
    target: NamedPartitions
    waits_for: dict[str, NamedPartitions]
    """Owner member id -> the partitions of this member's target it still holds (unreleased partitions)."""
    session_deadline_ms: int | None
    revocation_deadline_ms: int | None


def named(partitions: Partitions, topic_name: Callable[[str], str]) -> NamedPartitions:
    return dict(sorted((topic_name(topic_id), parts) for topic_id, parts in by_topic(partitions).items()))


def topic_names_of(group: ConsumerGroup) -> Callable[[str], str]:
    """Topic id -> name as the group last saw its subscribed topics; an id the group no longer knows stays an id."""
    names = {image.topic_id: name for name, image in group.subscription_metadata.items()}
    return lambda topic_id: names.get(topic_id, topic_id)


def member_view(
    group: ConsumerGroup, member: ConsumerGroupMember, deadline: Callable[[Hashable], int | None]
) -> ConsumerMemberView:
    topic_name = topic_names_of(group)
    state = member.assignment
    target = assignment_partitions(group.target_of(member.member_id))
    held_elsewhere: dict[str, set[tuple[str, int]]] = {}
    for tp in target - state.assigned_partitions:
        owner = group.owners.get(tp)
        if owner is not None and owner != member.member_id:
            held_elsewhere.setdefault(owner, set()).add(tp)
    return ConsumerMemberView(
        member_id=member.member_id,
        instance_id=member.instance_id,
        client_id=member.client_id,
        client_host=member.client_host,
        member_epoch=member.member_epoch,
        state=state.state.name,
        assigned=named(state.assigned_partitions, topic_name),
        pending_revocation=named(state.partitions_pending_revocation, topic_name),
        target=named(target, topic_name),
        waits_for={owner: named(frozenset(tps), topic_name) for owner, tps in sorted(held_elsewhere.items())},
        session_deadline_ms=deadline(session_key(group.group_id, member.member_id)),
        revocation_deadline_ms=deadline(revocation_key(group.group_id, member.member_id)),
    )


def member_views(group: ConsumerGroup, deadline: Callable[[Hashable], int | None]) -> list[ConsumerMemberView]:
    return [member_view(group, m, deadline) for m in group.members.values()]


def show(partitions: NamedPartitions) -> str:
    """`orders-0,orders-2, payments-1`: Kafka's topic-partition spelling, grouped by topic."""
    return ", ".join(",".join(f"{topic}-{p}" for p in indexes) for topic, indexes in partitions.items())


def reconciliation_waits(views: list[ConsumerMemberView]) -> list[str]:
    """What the group's reconciliation waits for, one sentence per member that owes or waits for partitions."""
    sentences = []
    for view in views:
        if view.pending_revocation:
            revoking = show(view.pending_revocation)
            sentences.append(f"waiting for member {view.member_id} to revoke partitions {revoking}")
        for owner, partitions in view.waits_for.items():
            sentences.append(f"member {view.member_id} waits for partitions {show(partitions)} held by {owner}")
    return sentences
