"""Kafka's CurrentAssignmentBuilderTest cases, one test each, against `reconcile` (same names, snake_case).

Kafka's epoch function answers "current epoch of the partition, -1 if free"; here `is_held` answers yes/no, so a
Kafka lambda returning -1 is `FREE` and one returning an epoch is `HELD`. Kafka's topic ids are the keys t1/t2.
"""

from __future__ import annotations

import pytest

from coordinator.consumer_group.member_state import MemberAssignmentState, MemberState, Partitions, TopicPartition
from coordinator.consumer_group.reconciliation import Heartbeat, TargetAssignment, reconcile
from coordinator.errors import GroupError
from protocol.errors import ErrorCode

STABLE = MemberState.STABLE
UNREVOKED = MemberState.UNREVOKED_PARTITIONS
UNRELEASED = MemberState.UNRELEASED_PARTITIONS


def FREE(tp: TopicPartition) -> bool:
    return False


def HELD(tp: TopicPartition) -> bool:
    return True


def parts(t1: tuple[int, ...] = (), t2: tuple[int, ...] = ()) -> Partitions:
    """Partitions of topics t1 and t2, as Kafka's mkAssignment(mkTopicAssignment(...), ...) writes them."""
    return frozenset([("t1", p) for p in t1] + [("t2", p) for p in t2])


def member(
    state: MemberState,
    epoch: int,
    previous: int,
    assigned: Partitions,
    pending: Partitions = frozenset(),
) -> MemberAssignmentState:
    return MemberAssignmentState(epoch, previous, state, assigned, pending)


def test_stable_to_stable() -> None:
    m = member(STABLE, 10, 10, parts((1, 2, 3), (4, 5, 6)))
    got = reconcile(m, TargetAssignment(11, parts((1, 2, 3), (4, 5, 6))), Heartbeat(None, HELD))
    assert got == member(STABLE, 11, 10, parts((1, 2, 3), (4, 5, 6)))


def test_stable_to_stable_with_new_partitions() -> None:
    m = member(STABLE, 10, 10, parts((1, 2, 3), (4, 5, 6)))
    got = reconcile(m, TargetAssignment(11, parts((1, 2, 3, 4), (4, 5, 6, 7))), Heartbeat(None, FREE))
    assert got == member(STABLE, 11, 10, parts((1, 2, 3, 4), (4, 5, 6, 7)))


def test_stable_to_unrevoked_partitions() -> None:
    m = member(STABLE, 10, 10, parts((1, 2, 3), (4, 5, 6)))
    got = reconcile(m, TargetAssignment(11, parts((2, 3, 4), (5, 6, 7))), Heartbeat(None, FREE))
    assert got == member(UNREVOKED, 10, 10, parts((2, 3), (5, 6)), parts((1,), (4,)))


def test_stable_to_unreleased_partitions() -> None:
    m = member(STABLE, 10, 10, parts((1, 2, 3), (4, 5, 6)))
    got = reconcile(m, TargetAssignment(11, parts((1, 2, 3, 4), (4, 5, 6, 7))), Heartbeat(None, HELD))
    assert got == member(UNRELEASED, 11, 10, parts((1, 2, 3), (4, 5, 6)))


def test_stable_to_unreleased_partitions_with_owned_partitions_not_having_revoked_partitions() -> None:
    m = member(STABLE, 10, 10, parts((1, 2, 3), (4, 5, 6)))
    got = reconcile(
        m,
        TargetAssignment(11, parts((1, 2, 3), (4, 5, 7))),
        Heartbeat(frozenset(), lambda tp: tp[0] == "t2"),
    )
    assert got == member(UNRELEASED, 11, 10, parts((1, 2, 3), (4, 5)))


def test_unrevoked_partitions_to_stable() -> None:
    m = member(UNREVOKED, 10, 10, parts((2, 3), (5, 6)), parts((1,), (4,)))
    got = reconcile(m, TargetAssignment(11, parts((2, 3), (5, 6))), Heartbeat(parts((2, 3), (5, 6)), FREE))
    assert got == member(STABLE, 11, 10, parts((2, 3), (5, 6)))


@pytest.mark.parametrize(
    "owned",
    [None, parts((1, 2, 3), (5, 6)), parts((2, 3), (4, 5, 6))],
    ids=["not_reported", "still_owns_t1_1", "still_owns_t2_4"],
)
def test_remains_in_unrevoked_partitions(owned: Partitions | None) -> None:
    m = member(UNREVOKED, 10, 10, parts((2, 3), (5, 6)), parts((1,), (4,)))
    got = reconcile(m, TargetAssignment(12, parts((3,), (6,))), Heartbeat(owned, FREE))
    assert got is m


def test_unrevoked_partitions_to_unrevoked_partitions() -> None:
    m = member(UNREVOKED, 10, 10, parts((2, 3), (5, 6)), parts((1,), (4,)))
    got = reconcile(m, TargetAssignment(12, parts((3,), (6,))), Heartbeat(parts((2, 3), (5, 6)), FREE))
    assert got == member(UNREVOKED, 10, 10, parts((3,), (6,)), parts((2,), (5,)))


def test_unrevoked_partitions_to_unreleased_partitions() -> None:
    m = member(UNREVOKED, 11, 10, parts((2, 3), (5, 6)))
    got = reconcile(m, TargetAssignment(11, parts((2, 3, 4), (5, 6, 7))), Heartbeat(parts((2, 3), (5, 6)), HELD))
    assert got == member(UNRELEASED, 11, 11, parts((2, 3), (5, 6)))


def test_unrevoked_partitions_to_stable_with_returned_partitions_pending_revocation() -> None:
    # t1-4 is pending revocation by this very member and is back in its target: held by itself, not unreleased.
    m = member(UNREVOKED, 10, 10, parts((2, 3), (5, 6)), parts((4,)))
    held_at_10 = parts((2, 3, 4), (5, 6))
    got = reconcile(
        m,
        TargetAssignment(12, parts((2, 3, 4), (5, 6, 7))),
        Heartbeat(parts((2, 3), (5, 6)), held_at_10.__contains__),
    )
    assert got == member(STABLE, 12, 10, parts((2, 3, 4), (5, 6, 7)))


def test_unreleased_partitions_to_stable() -> None:
    m = member(UNRELEASED, 11, 11, parts((2, 3), (5, 6)))
    got = reconcile(m, TargetAssignment(12, parts((2, 3), (5, 6))), Heartbeat(None, HELD))
    assert got == member(STABLE, 12, 11, parts((2, 3), (5, 6)))


def test_unreleased_partitions_to_stable_with_new_partitions() -> None:
    m = member(UNRELEASED, 11, 11, parts((2, 3), (5, 6)))
    got = reconcile(m, TargetAssignment(11, parts((2, 3, 4), (5, 6, 7))), Heartbeat(None, FREE))
    assert got == member(STABLE, 11, 11, parts((2, 3, 4), (5, 6, 7)))


def test_unreleased_partitions_to_unreleased_partitions() -> None:
    m = member(UNRELEASED, 11, 11, parts((2, 3), (5, 6)))
    got = reconcile(m, TargetAssignment(11, parts((2, 3, 4), (5, 6, 7))), Heartbeat(None, HELD))
    assert got == m


def test_unreleased_partitions_to_unrevoked_partitions() -> None:
    m = member(UNRELEASED, 11, 11, parts((2, 3), (5, 6)))
    got = reconcile(m, TargetAssignment(12, parts((3,), (6,))), Heartbeat(None, HELD))
    assert got == member(UNREVOKED, 11, 11, parts((3,), (6,)), parts((2,), (5,)))


def test_unknown_state() -> None:
    m = member(MemberState.UNKNOWN, 11, 11, parts((3,), (6,)), parts((2,), (5,)))
    target = TargetAssignment(12, parts((3,), (6,)))
    # First the member is fenced, to make it reset its own state...
    with pytest.raises(GroupError) as fenced:
        reconcile(m, target, Heartbeat(None, HELD))
    assert fenced.value.code is ErrorCode.FENCED_MEMBER_EPOCH
    # ...then it comes back owning nothing and is reconciled from scratch.
    got = reconcile(m, target, Heartbeat(frozenset(), HELD))
    assert got == member(STABLE, 12, 11, parts((3,), (6,)))


def test_unknown_state_still_owning_partitions_is_fenced() -> None:
    # Kafka's condition is "owned not reported, or not empty"; its test covers only the unreported half.
    m = member(MemberState.UNKNOWN, 11, 11, parts((3,), (6,)))
    with pytest.raises(GroupError) as fenced:
        reconcile(m, TargetAssignment(12, parts((3,), (6,))), Heartbeat(parts((3,)), FREE))
    assert fenced.value.code is ErrorCode.FENCED_MEMBER_EPOCH


@pytest.mark.parametrize(
    ("member_epoch", "target_epoch", "expected_epoch", "enforce"),
    [(10, 11, 11, False), (10, 11, 11, True), (10, 10, 10, True)],
)
def test_stable_to_stable_with_assignment_topics_no_longer_in_subscription(
    member_epoch: int, target_epoch: int, expected_epoch: int, enforce: bool
) -> None:
    m = member(STABLE, member_epoch, member_epoch - 1, parts((1, 2, 3), (4, 5, 6)))
    got = reconcile(
        m,
        TargetAssignment(target_epoch, parts((1, 2, 3), (4, 5, 6))),
        Heartbeat(parts((), (4, 5, 6)), FREE, frozenset({"t2"}), enforce),
    )
    # The previous epoch catches up in every case, even when the epoch itself does not move.
    assert got == member(STABLE, expected_epoch, member_epoch, parts((), (4, 5, 6)))


@pytest.mark.parametrize(
    ("member_epoch", "target_epoch", "expected_epoch", "enforce"),
    [(10, 11, 10, False), (10, 11, 10, True), (10, 10, 10, True)],
)
def test_stable_to_unrevoked_partitions_with_assignment_topics_no_longer_in_subscription(
    member_epoch: int, target_epoch: int, expected_epoch: int, enforce: bool
) -> None:
    m = member(STABLE, member_epoch, member_epoch - 1, parts((1, 2, 3), (4, 5, 6)))
    got = reconcile(
        m,
        TargetAssignment(target_epoch, parts((1, 2, 3), (4, 5, 6))),
        Heartbeat(parts((1, 2, 3), (4, 5, 6)), FREE, frozenset({"t2"}), enforce),
    )
    assert got == member(UNREVOKED, expected_epoch, member_epoch, parts((), (4, 5, 6)), parts((1, 2, 3)))


def test_remains_in_unrevoked_partitions_with_assignment_topics_no_longer_in_subscription() -> None:
    m = member(UNREVOKED, 10, 10, parts((2, 3), (5, 6)), parts((1,), (4,)))
    got = reconcile(
        m,
        TargetAssignment(12, parts((1, 3, 4), (6, 7))),
        Heartbeat(parts((1, 2, 3), (4, 5, 6)), FREE, frozenset({"t2"}), enforce_subscription=True),
    )
    assert got == member(UNREVOKED, 10, 10, parts((), (5, 6)), parts((1, 2, 3), (4,)))


# Kafka's regular-expression cases: the caller resolves the subscription (names plus the topics a resolved
# expression matched; an unresolved expression matches nothing), so each case becomes a set of subscribed topics.


def test_subscribed_topic_name_and_unresolved_regular_expression() -> None:
    m = member(STABLE, 10, 10, parts((1, 2, 3), (4, 5, 6)))
    got = reconcile(
        m,
        TargetAssignment(10, parts((1, 2, 3), (4, 5, 6))),
        Heartbeat(parts((1, 2, 3), (4, 5, 6)), FREE, frozenset({"t1"}), enforce_subscription=True),
    )
    assert got == member(UNREVOKED, 10, 10, parts((1, 2, 3)), parts((), (4, 5, 6)))


def test_unresolved_regular_expression() -> None:
    m = member(STABLE, 10, 10, parts((1, 2, 3), (4, 5, 6)))
    got = reconcile(
        m,
        TargetAssignment(10, parts((1, 2, 3), (4, 5, 6))),
        Heartbeat(parts((1, 2, 3), (4, 5, 6)), FREE, frozenset(), enforce_subscription=True),
    )
    assert got == member(UNREVOKED, 10, 10, frozenset(), parts((1, 2, 3), (4, 5, 6)))


def test_subscribed_topic_name_and_resolved_regular_expression() -> None:
    m = member(STABLE, 10, 10, parts((1, 2, 3), (4, 5, 6)))
    got = reconcile(
        m,
        TargetAssignment(10, parts((1, 2, 3), (4, 5, 6))),
        Heartbeat(parts((1, 2, 3), (4, 5, 6)), FREE, frozenset({"t1", "t2"}), enforce_subscription=True),
    )
    assert got is m


def test_dropped_partitions_already_released_keep_the_state() -> None:
    # updateCurrentAssignment's other branch: the member no longer owns the unsubscribed topic's partitions,
    # so they leave its assignment without a revocation round and it stays STABLE.
    m = member(STABLE, 10, 9, parts((1, 2, 3), (4, 5, 6)))
    got = reconcile(
        m,
        TargetAssignment(10, parts((1, 2, 3), (4, 5, 6))),
        Heartbeat(parts((), (4, 5, 6)), FREE, frozenset({"t2"}), enforce_subscription=True),
    )
    assert got == member(STABLE, 10, 10, parts((), (4, 5, 6)))


def test_stored_state_bytes_are_kafkas() -> None:
    assert [s.value for s in MemberState] == [0, 1, 2, 127]
    assert MemberState.from_value(2) is UNRELEASED
    assert MemberState.from_value(3) is MemberState.UNKNOWN
