"""Kafka's server-side assignors for consumer groups, by the names members and `group.consumer.assignors` use.

Each assignor is a pure function of the group spec and the partition counts: no clock, no randomness, no reliance
on mapping order, so replaying the same records after a restart computes the same target assignment.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from coordinator.consumer_group.assignor_spec import (
    GroupAssignment,
    GroupSpec,
    TopicKey,
    check_topics_exist,
    freeze,
)
from coordinator.consumer_group.range_assignor import assign_range
from coordinator.consumer_group.uniform_heterogeneous import assign_heterogeneous
from coordinator.consumer_group.uniform_homogeneous import assign_homogeneous

Assignor = Callable[[GroupSpec, Mapping[TopicKey, int]], GroupAssignment]

UNIFORM = "uniform"
RANGE = "range"
DEFAULT_ASSIGNOR = UNIFORM
"""Kafka's default for `group.consumer.assignors` is [uniform, range]: the first one is the group's default."""


def uniform(group: GroupSpec, partition_counts: Mapping[TopicKey, int]) -> GroupAssignment:
    """Kafka's UniformAssignor: balanced (within one partition when subscriptions are equal) and sticky."""
    check_topics_exist(group, partition_counts)
    if not group.subscribed_topics():
        return freeze({}, group.members)
    if group.is_homogeneous():
        return assign_homogeneous(group, partition_counts)
    return assign_heterogeneous(group, partition_counts)


def range_(group: GroupSpec, partition_counts: Mapping[TopicKey, int]) -> GroupAssignment:
    """Kafka's RangeAssignor: co-partitioned ranges per topic, sticky for static members only."""
    check_topics_exist(group, partition_counts)
    return assign_range(group, partition_counts)


ASSIGNORS: Mapping[str, Assignor] = {UNIFORM: uniform, RANGE: range_}
