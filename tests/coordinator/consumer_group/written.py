"""Reading what a consumer-group heartbeat wrote, as Kafka's GroupMetadataManagerTest compares `result.records()`.

`Written(ctx)` remembers where the group's `__consumer_offsets` partition ended; `new()` returns the records
appended since (and moves the mark), and `kinds()` spells them compactly: `MemberMetadata(m1)`,
`Metadata`, `-TargetAssignmentMember(m1)` (a leading `-` is a tombstone). Topic ids are turned back into the
names the test created with `names(...)`, so expected values read like the test's own words.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from coordinator.records import CoordinatorRecord
from protocol.kafka_uuid import kafka_uuid_from_str
from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext, topic_id

KNOWN_TOPICS = ("foo", "bar", "baz", "foo1", "foo2", "foo3", "other")
"""The topic names the rule tests use; ids are reversed to these names."""

_NAMES: dict[uuid.UUID, str] = {kafka_uuid_from_str(topic_id(n)): n for n in KNOWN_TOPICS}


def names(topic_partitions: Iterable[Any]) -> dict[str, list[int]]:
    """Entries with `topic_id` (a UUID) and `partitions` as {topic name: sorted partitions}."""
    return {_NAMES[tp.topic_id]: sorted(tp.partitions) for tp in topic_partitions}


def kind(record: CoordinatorRecord) -> str:
    name = type(record.key).__name__.removeprefix("ConsumerGroup").removesuffix("Key")
    member_id = getattr(record.key, "member_id", None)
    label = name if member_id is None else f"{name}({member_id})"
    return f"-{label}" if record.value is None else label


class Written:
    """The records appended to one group's partition since the last look."""

    def __init__(self, ctx: ConsumerGroupTestContext, group_id: str = "group") -> None:
        self.ctx = ctx
        self.partition = ctx.coordinator.partition_for(group_id)
        self.mark = len(ctx.store.records(self.partition))

    def new(self) -> list[CoordinatorRecord]:
        records = self.ctx.store.records(self.partition)
        fresh = records[self.mark :]
        self.mark = len(records)
        return fresh

    def kinds(self) -> list[str]:
        return [kind(r) for r in self.new()]


def current_assignment(record: CoordinatorRecord) -> tuple[int, int, int, dict[str, list[int]], dict[str, list[int]]]:
    """A CurrentMemberAssignment value as (epoch, previous epoch, state byte, assigned, pending revocation)."""
    value = record.value
    assert value is not None and kind(record).startswith("CurrentMemberAssignment"), kind(record)
    return (
        value.member_epoch,  # type: ignore[union-attr]
        value.previous_member_epoch,  # type: ignore[union-attr]
        value.state,  # type: ignore[union-attr]
        names(value.assigned_partitions),  # type: ignore[union-attr]
        names(value.partitions_pending_revocation),  # type: ignore[union-attr]
    )


def target_partitions(record: CoordinatorRecord) -> dict[str, list[int]]:
    """A TargetAssignmentMember value as {topic name: partitions}."""
    value = record.value
    assert value is not None and kind(record).startswith("TargetAssignmentMember"), kind(record)
    return names(value.topic_partitions)  # type: ignore[union-attr]


# -- the record sequences Kafka writes, as `kinds()` spells them ----------------------------------------------


def fenced(member_id: str) -> list[str]:
    """A member leaving or fenced (K36): current assignment, target, then metadata tombstones."""
    return [
        f"-CurrentMemberAssignment({member_id})",
        f"-TargetAssignmentMember({member_id})",
        f"-MemberMetadata({member_id})",
    ]


def left(member_id: str) -> list[str]:
    """A member leaving or fenced while others stay (K36, Kafka 4.4's consumerGroupFenceMembers): its tombstones,
    then the group epoch bump; the new target comes with the next heartbeat. (The last member leaving is followed
    by the empty target's TargetAssignmentMetadata at the new epoch.)"""
    return [*fenced(member_id), "Metadata"]


def replaced(old: str, new: str) -> list[str]:
    """A static member taking over a departed one (K34): the old member's tombstones, then the copy."""
    return [
        *fenced(old),
        f"MemberMetadata({new})",
        f"TargetAssignmentMember({new})",
        f"CurrentMemberAssignment({new})",
    ]


def new_target(member_id: str) -> list[str]:
    """A one-member target recomputation (K53): its target, the assignment epoch, its reconciliation step."""
    return [f"TargetAssignmentMember({member_id})", "TargetAssignmentMetadata", f"CurrentMemberAssignment({member_id})"]


def subscribed(member_id: str) -> list[str]:
    """A member whose (new) subscription changes the subscribed topics (K53/K54, Kafka 4.0's PartitionMetadata
    record) and is then the only member whose target changes."""
    return [f"MemberMetadata({member_id})", "PartitionMetadata", "Metadata", *new_target(member_id)]
