"""A KIP-848 consumer group: epochs, members, the target assignment and who holds which partition.

Three epochs order everything (KIP-848):

* the group epoch moves whenever anything that shapes the assignment changes (a member joins, leaves or changes
  its subscription, a subscribed topic changes);
* the assignment epoch is the group epoch the current target assignment was computed for; when it lags the group
  epoch a new target is due (state ASSIGNING);
* each member's epoch reaches the assignment epoch once the member has reconciled (state RECONCILING until all do).

The group is bookkeeping with invariants only: `owners` indexes, for every partition some member holds (assigned
or pending its revocation), that member, so reconciliation can tell in O(1) whether a target partition is still
held by someone else. Timers, records and responses belong to the manager (`heartbeat.py`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from coordinator.consumer_group.assignor_spec import MemberAssignment
from coordinator.consumer_group.member import ConsumerGroupMember
from coordinator.consumer_group.member_state import MemberState, TopicPartition
from coordinator.consumer_group.topics import TopicImage
from coordinator.group import CONSUMER_PROTOCOL_TYPE
from coordinator.offsets import GroupOffsets

INITIAL_EPOCH = 1
"""The epochs of a group that has written nothing yet; its first join writes epoch 2."""
CONSUMER_GROUP_TYPE = "consumer"


class ConsumerGroupState(enum.Enum):
    """Kafka's `ConsumerGroup.ConsumerGroupState`; `.value` is the spelling ListGroups and the describes use."""

    EMPTY = "Empty"
    """No members (the group may still hold committed offsets)."""
    ASSIGNING = "Assigning"
    """The group epoch moved past the assignment epoch: a new target assignment is due."""
    RECONCILING = "Reconciling"
    """The target is computed; some members have not reached it yet."""
    STABLE = "Stable"
    """Every member holds its target partitions at the assignment epoch."""
    DEAD = "Dead"
    """Deleted or unloaded; requests racing it are told to retry."""

    @property
    def lower(self) -> str:
        return self.value.lower()


@dataclass(slots=True)
class ConsumerGroupSnapshot:
    """Everything a heartbeat may change, to restore when its records could not be written."""

    group_epoch: int
    assignment_epoch: int
    members: dict[str, ConsumerGroupMember]
    target: dict[str, MemberAssignment]
    subscription_metadata: dict[str, TopicImage]
    resolved_regexes: dict[str, frozenset[str]]
    metadata_version_seen: int
    last_assignment_ms: int | None
    writes_before: int
    """How many writes the group had issued when the snapshot was taken (`ConsumerGroup.writes_issued`)."""


class ConsumerGroup:
    """Metadata of one consumer group (Kafka's `ConsumerGroup`)."""

    __slots__ = (
        "_assignment_epoch",
        "_reconciled",
        "group_epoch",
        "group_id",
        "last_assignment_ms",
        "members",
        "metadata_version_seen",
        "offsets",
        "owners",
        "partition",
        "resolved_regexes",
        "state",
        "state_timestamp_ms",
        "static_members",
        "subscription_metadata",
        "target",
        "writes_issued",
    )

    def __init__(self, group_id: str, partition: int, *, state_timestamp_ms: int | None = None) -> None:
        self.group_id = group_id
        self.partition = partition
        # Kafka 4.4 (KAFKA-20268) starts a new group at epoch 1 with an empty target at epoch 1, written nowhere,
        # so that its first members reconcile towards epoch 1 while the first real target (epoch 2) is computed.
        self.group_epoch = INITIAL_EPOCH
        self._assignment_epoch = INITIAL_EPOCH
        self._reconciled = 0
        """How many members are reconciled (STABLE at the assignment epoch): the group state in O(1)."""
        self.last_assignment_ms: int | None = None
        """When the target was last computed (monotonic ms); None: never, so the next one is not delayed by
        `group.consumer.assignment.interval.ms` (nor after a load: the record carries no timestamp here)."""
        self.members: dict[str, ConsumerGroupMember] = {}
        """In join order."""
        self.static_members: dict[str, str] = {}
        """instance id -> member id."""
        self.target: dict[str, MemberAssignment] = {}
        """member id -> its partitions in the target assignment (topic id -> partitions)."""
        self.subscription_metadata: dict[str, TopicImage] = {}
        """The subscribed topics as last seen (Kafka's PartitionMetadata record): a change bumps the group epoch."""
        self.resolved_regexes: dict[str, frozenset[str]] = {}
        """Each subscribed regular expression -> the topic names it matched at the last refresh."""
        self.metadata_version_seen = -1
        """The topic catalog version the two maps above were computed at; -1 forces a refresh."""
        self.owners: dict[TopicPartition, str] = {}
        self.offsets = GroupOffsets()
        self.state = ConsumerGroupState.EMPTY
        self.state_timestamp_ms = state_timestamp_ms
        self.writes_issued = 0
        """Writes about this group handed to the log so far; never restored, so an undo can tell whether a later
        write was built on the failed one (`note_write`, `is_latest_write`)."""

    def __repr__(self) -> str:
        return (
            f"ConsumerGroup({self.group_id!r}, {self.state.value}, epoch={self.group_epoch}, "
            f"assignment_epoch={self.assignment_epoch}, members={list(self.members)})"
        )

    # -- what the other group type also answers ---------------------------------------------------------------

    @property
    def group_type(self) -> str:
        return CONSUMER_GROUP_TYPE

    @property
    def protocol_type(self) -> str:
        return CONSUMER_PROTOCOL_TYPE

    @property
    def is_dead(self) -> bool:
        return self.state is ConsumerGroupState.DEAD

    @property
    def is_empty(self) -> bool:
        return not self.members

    @property
    def assignment_epoch(self) -> int:
        return self._assignment_epoch

    @assignment_epoch.setter
    def assignment_epoch(self, epoch: int) -> None:
        self._assignment_epoch = epoch
        self._reconciled = sum(1 for m in self.members.values() if self._is_reconciled(m))

    def _is_reconciled(self, member: ConsumerGroupMember) -> bool:
        return member.member_epoch == self._assignment_epoch and member.state is MemberState.STABLE

    # -- members ---------------------------------------------------------------------------------------------

    def member(self, member_id: str) -> ConsumerGroupMember | None:
        return self.members.get(member_id)

    def static_member(self, instance_id: str) -> ConsumerGroupMember | None:
        member_id = self.static_members.get(instance_id)
        return None if member_id is None else self.members.get(member_id)

    def put_member(self, member: ConsumerGroupMember) -> None:
        """Add or replace a member, keeping the static map and the owners index right."""
        old = self.members.get(member.member_id)
        if old is not None:
            self._release(old)
            self._reconciled -= self._is_reconciled(old)
        self.members[member.member_id] = member
        self._reconciled += self._is_reconciled(member)
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id
        self._hold(member)

    def remove_member(self, member_id: str) -> ConsumerGroupMember | None:
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        self._release(member)
        self._reconciled -= self._is_reconciled(member)
        if member.instance_id is not None and self.static_members.get(member.instance_id) == member_id:
            del self.static_members[member.instance_id]
        return member

    def _hold(self, member: ConsumerGroupMember) -> None:
        state = member.assignment
        for tp in state.assigned_partitions | state.partitions_pending_revocation:
            self.owners[tp] = member.member_id

    def _release(self, member: ConsumerGroupMember) -> None:
        state = member.assignment
        for tp in state.assigned_partitions | state.partitions_pending_revocation:
            if self.owners.get(tp) == member.member_id:
                del self.owners[tp]

    def held_elsewhere(self, member: ConsumerGroupMember) -> tuple[TopicPartition, str] | None:
        """A partition `member` holds that another member already holds, with that member's id; None when there is
        none. One owner per partition is what reconciliation rests on: Kafka refuses a second one
        (`addPartitionEpochs`: IllegalStateException), so loading or converting state that has one must fail."""
        for tp in member.assignment.assigned_partitions | member.assignment.partitions_pending_revocation:
            owner = self.owners.get(tp)
            if owner is not None and owner != member.member_id:
                return tp, owner
        return None

    def is_held(self, partition: TopicPartition) -> bool:
        """Whether some member still holds `partition` (assigned to it or pending its revocation)."""
        return partition in self.owners

    def target_of(self, member_id: str) -> MemberAssignment:
        return self.target.get(member_id, {})

    # -- subscriptions ---------------------------------------------------------------------------------------

    def subscribed_topic_names(self, member: ConsumerGroupMember) -> frozenset[str]:
        """The topic names `member` subscribes to: its list, or what its regular expression resolved to."""
        if member.subscribed_topic_regex is not None:
            return self.resolved_regexes.get(member.subscribed_topic_regex, frozenset())
        return frozenset(member.subscribed_topic_names)

    def all_subscribed_topic_names(self) -> frozenset[str]:
        names: set[str] = set()
        for member in self.members.values():
            names.update(self.subscribed_topic_names(member))
        return frozenset(names)

    def regexes(self) -> frozenset[str]:
        return frozenset(m.subscribed_topic_regex for m in self.members.values() if m.subscribed_topic_regex)

    # -- state -----------------------------------------------------------------------------------------------

    def computed_state(self) -> ConsumerGroupState:
        """Kafka's `maybeUpdateGroupState`."""
        if self.state is ConsumerGroupState.DEAD:
            return self.state
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self._assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if self._reconciled < len(self.members):
            return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    # -- failed writes ---------------------------------------------------------------------------------------

    def snapshot(self) -> ConsumerGroupSnapshot:
        return ConsumerGroupSnapshot(
            self.group_epoch,
            self.assignment_epoch,
            dict(self.members),
            dict(self.target),
            dict(self.subscription_metadata),
            dict(self.resolved_regexes),
            self.metadata_version_seen,
            self.last_assignment_ms,
            self.writes_issued,
        )

    def note_write(self) -> None:
        """A write of the changes made since the last snapshot is being handed to the log."""
        self.writes_issued += 1

    def is_latest_write(self, snapshot: ConsumerGroupSnapshot) -> bool:
        """Whether the write that followed `snapshot` is the group's last one: only then can restoring `snapshot`
        undo exactly that write."""
        return self.writes_issued == snapshot.writes_before + 1

    def restore(self, snapshot: ConsumerGroupSnapshot) -> None:
        """Put back what `snapshot` saw (members are immutable values, so the copies are exact)."""
        self.members = {}
        self.static_members = {}
        self.owners = {}
        self.group_epoch = snapshot.group_epoch
        self.assignment_epoch = snapshot.assignment_epoch  # recounts: no member yet
        self.target = snapshot.target
        self.subscription_metadata = snapshot.subscription_metadata
        self.resolved_regexes = snapshot.resolved_regexes
        self.metadata_version_seen = snapshot.metadata_version_seen
        self.last_assignment_ms = snapshot.last_assignment_ms
        for member in snapshot.members.values():
            self.put_member(member)
