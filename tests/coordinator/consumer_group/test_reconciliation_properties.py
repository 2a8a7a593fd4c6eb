"""Properties of reconciliation over random runs of a whole group: target changes and heartbeats interleaved.

The model: a coordinator keeps each member's `MemberAssignmentState`. Each client consumes what it owns and
switches to the latest heartbeat response's assignment only when it has finished revoking (a separate, possibly
late event), so a heartbeat may report partitions the coordinator already asked it to give up, or leave its owned
partitions out altogether. A partition is held for everyone else while a member has it
assigned or pending revocation, which is what Kafka's current-partition-epoch map tracks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coordinator.consumer_group.member_state import MemberAssignmentState, MemberState, Partitions, TopicPartition
from coordinator.consumer_group.reconciliation import Heartbeat, TargetAssignment, reconcile

MEMBERS = 3
PARTITIONS: tuple[TopicPartition, ...] = tuple((topic, p) for topic in ("a", "b") for p in range(4))
RUNS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@dataclass
class Group:
    """The coordinator's view and the clients' view of one group, driven one event at a time."""

    target_epoch: int = 0
    targets: list[Partitions] = field(default_factory=lambda: [frozenset()] * MEMBERS)
    members: list[MemberAssignmentState] = field(default_factory=lambda: [MemberAssignmentState()] * MEMBERS)
    owned: list[Partitions] = field(default_factory=lambda: [frozenset()] * MEMBERS)
    responses: list[Partitions] = field(default_factory=lambda: [frozenset()] * MEMBERS)

    def new_target(self, owners: list[int | None]) -> None:
        """A new target assignment: partition i goes to member owners[i] (None: to nobody)."""
        self.target_epoch += 1
        self.targets = [
            frozenset(tp for tp, o in zip(PARTITIONS, owners, strict=True) if o == i) for i in range(MEMBERS)
        ]

    def is_held(self, tp: TopicPartition) -> bool:
        return any(m.holds(tp) for m in self.members)

    def heartbeat(self, index: int, report_owned: bool) -> None:
        before = self.members[index]
        after = reconcile(
            before,
            TargetAssignment(self.target_epoch, self.targets[index]),
            Heartbeat(self.owned[index] if report_owned else None, self.is_held),
        )
        check_step(before, after, self.target_epoch)
        self.members[index] = after
        self.responses[index] = after.assigned_partitions

    def apply(self, index: int) -> None:
        """The client has revoked what its latest response took away and starts on what it added."""
        self.owned[index] = self.responses[index]

    def play(self, event: tuple[object, ...]) -> None:
        kind, index = event[0], event[1]
        if kind == "target":
            self.new_target(index)  # type: ignore[arg-type]
        elif kind == "heartbeat":
            self.heartbeat(index, event[2])  # type: ignore[arg-type]
        else:
            self.apply(index)  # type: ignore[arg-type]

    def check(self) -> None:
        for i in range(MEMBERS):
            for j in range(i + 1, MEMBERS):
                mi, mj = self.members[i], self.members[j]
                held_i = mi.assigned_partitions | mi.partitions_pending_revocation
                held_j = mj.assigned_partitions | mj.partitions_pending_revocation
                assert held_i.isdisjoint(held_j), f"members {i} and {j} both hold {held_i & held_j}"
                assert self.owned[i].isdisjoint(self.owned[j]), f"clients {i} and {j} both consume"


def check_step(before: MemberAssignmentState, after: MemberAssignmentState, target_epoch: int) -> None:
    """Epochs only move forward, only to the target epoch, and only once nothing is left to revoke."""
    assert after.member_epoch >= before.member_epoch
    assert after.previous_member_epoch <= after.member_epoch
    if after.member_epoch != before.member_epoch:
        assert after.member_epoch == target_epoch
        assert not after.partitions_pending_revocation
    if after.state is MemberState.UNREVOKED_PARTITIONS:
        assert after.partitions_pending_revocation
        assert after.member_epoch == before.member_epoch
    else:
        assert not after.partitions_pending_revocation


owners = st.lists(st.none() | st.integers(0, MEMBERS - 1), min_size=len(PARTITIONS), max_size=len(PARTITIONS))
events = st.lists(
    st.one_of(
        st.tuples(st.just("target"), owners),
        st.tuples(st.just("heartbeat"), st.integers(0, MEMBERS - 1), st.booleans()),
        st.tuples(st.just("apply"), st.integers(0, MEMBERS - 1)),
    ),
    min_size=10,
    max_size=80,
)


def played(first: list[int | None], run: list[tuple[object, ...]]) -> Group:
    """A group after its first target and `run`, checked after every event."""
    group = Group()
    group.new_target(first)
    for event in run:
        group.play(event)
        group.check()
    return group


@RUNS
@given(first=owners, run=events)
def test_no_partition_is_ever_held_by_two_members_and_epochs_never_go_back(
    first: list[int | None], run: list[tuple[object, ...]]
) -> None:
    group = played(first, run)
    assert group.target_epoch == 1 + sum(event[0] == "target" for event in run)


@RUNS
@given(first=owners, run=events)
def test_every_member_ends_stable_at_the_target_once_revocations_are_acknowledged(
    first: list[int | None], run: list[tuple[object, ...]]
) -> None:
    group = played(first, run)
    # From here on every client acknowledges: it finishes revoking before each heartbeat and reports what it
    # owns. Three rounds suffice: the first may only start revocations, the second acknowledges them, and the
    # third lets the members that heartbeated before a releasing member in the second round take what it released.
    for _ in range(3):
        for index in range(MEMBERS):
            group.apply(index)
            group.heartbeat(index, report_owned=True)
            group.check()
    for index in range(MEMBERS):
        group.apply(index)
    for index, m in enumerate(group.members):
        assert m.state is MemberState.STABLE
        assert m.member_epoch == group.target_epoch
        assert m.assigned_partitions == group.targets[index]
        assert group.owned[index] == group.targets[index]
