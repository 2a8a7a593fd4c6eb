"""The `uniform` assignor for a group whose members subscribe to different topics (Kafka's
UniformHeterogeneousAssignmentBuilder): keep every subscribed partition a member owns, hand out the rest to the
least loaded subscribers, then move partitions from the most to the least loaded subscribers of each topic until
no move improves balance.

Topics are visited in Kafka's order: most partitions per subscriber first (the hardest to balance), then fewer
subscribers, then topic key. Loads count partitions of all topics, so balance is across the whole member, and
balancing is bounded to `MAX_ROUNDS` passes as Kafka bounds it: with overlapping, non-identical subscriptions the
result is nearly balanced, and balance within one partition is only guaranteed per topic's subscriber set.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from coordinator.consumer_group.assignor_spec import GroupAssignment, GroupSpec, TopicKey, freeze, kept_partitions

MAX_ROUNDS = 16
"""Kafka's MAX_ITERATION_COUNT: passes over all topics in the balancing phase."""


class _Loads:
    """Who owns which partition and how many partitions each member holds; members are indices in id order."""

    def __init__(self, group: GroupSpec, partition_counts: Mapping[TopicKey, int]) -> None:
        self.member_ids = group.member_ids()
        self.sizes = [0] * len(self.member_ids)
        self.subscribers: dict[TopicKey, list[int]] = {}
        for index, member_id in enumerate(self.member_ids):
            for topic in group.members[member_id].subscribed_topics:
                self.subscribers.setdefault(topic, []).append(index)
        self.owners: dict[TopicKey, list[int]] = {t: [-1] * partition_counts[t] for t in self.subscribers}
        kept = kept_partitions(group, partition_counts)
        for index, member_id in enumerate(self.member_ids):
            for topic, parts in kept[member_id].items():
                for partition in parts:
                    self.give(topic, partition, index)

    def give(self, topic: TopicKey, partition: int, member: int) -> None:
        """Make `member` the owner of the partition, taking it from its previous owner if any."""
        previous = self.owners[topic][partition]
        if previous >= 0:
            self.sizes[previous] -= 1
        self.owners[topic][partition] = member
        self.sizes[member] += 1

    def topic_order(self) -> list[TopicKey]:
        """Most partitions per subscriber first, then fewer subscribers, then topic key (Kafka's comparator)."""
        return sorted(
            self.subscribers,
            key=lambda t: (-Fraction(len(self.owners[t]), len(self.subscribers[t])), len(self.subscribers[t]), t),
        )

    def result(self) -> dict[str, dict[TopicKey, list[int]]]:
        """Partitions per member per topic."""
        target: dict[str, dict[TopicKey, list[int]]] = {member_id: {} for member_id in self.member_ids}
        for topic, owners in self.owners.items():
            for partition, owner in enumerate(owners):
                target[self.member_ids[owner]].setdefault(topic, []).append(partition)
        return target


class _LeastLoadedRoundRobin:
    """Hands partitions to the least loaded subscribers in turns, as Kafka's balancer does.

    Subscribers are ranked once by (load, index). The members at the lowest load each get one partition in rank
    order; then the level rises by one and the members that were already at that level join the turn. Ties therefore
    follow the ranking taken at the start of the topic, not the member index; that is what makes the
    first assignments of Kafka's documented examples come out the same here.
    """

    def __init__(self, members: list[int], sizes: list[int]) -> None:
        self.sizes = sizes
        self.ranked = sorted(members, key=lambda m: (sizes[m], m))
        self.level = sizes[self.ranked[0]] - 1
        self.end = 0
        self.next = 0

    def pick(self) -> int:
        """The member to receive the next partition (the caller records the assignment)."""
        if self.next >= self.end:
            self.level += 1
            while self.end < len(self.ranked) and self.sizes[self.ranked[self.end]] == self.level:
                self.end += 1
            self.next = 0
        member = self.ranked[self.next]
        self.next += 1
        return member


def _balance_topic(loads: _Loads, topic: TopicKey) -> int:
    """Move this topic's partitions from its most to its least loaded subscribers; returns how many moved.

    The giver is the most loaded subscriber that still owns a partition of the topic (highest index on ties) and it
    gives up its highest partition, so lower partitions stay where they are; the taker is the least loaded
    subscriber (lowest index on ties). It stops when the two differ by one or less.
    """
    moved = 0
    owners = loads.owners[topic]
    subscribers = loads.subscribers[topic]
    while True:
        holders = {owner for owner in owners if owner >= 0}
        givers = [m for m in subscribers if m in holders]
        if not givers:
            return moved
        giver = max(givers, key=lambda m: (loads.sizes[m], m))
        taker = min(subscribers, key=lambda m: (loads.sizes[m], m))
        if loads.sizes[giver] - loads.sizes[taker] <= 1:
            return moved
        partition = max(p for p, owner in enumerate(owners) if owner == giver)
        loads.give(topic, partition, taker)
        moved += 1


def assign_heterogeneous(group: GroupSpec, partition_counts: Mapping[TopicKey, int]) -> GroupAssignment:
    """Target assignment of a heterogeneous group; topics must exist in `partition_counts` (checked by the caller)."""
    loads = _Loads(group, partition_counts)
    order = loads.topic_order()
    for topic in order:
        free = [p for p, owner in enumerate(loads.owners[topic]) if owner < 0]
        if free:
            turns = _LeastLoadedRoundRobin(loads.subscribers[topic], loads.sizes)
            for partition in free:
                loads.give(topic, partition, turns.pick())

    movable = [topic for topic in order if len(loads.subscribers[topic]) >= 2]
    for _ in range(MAX_ROUNDS):
        if sum(_balance_topic(loads, topic) for topic in movable) == 0:
            break
    return freeze(loads.result(), loads.member_ids)
