"""`group.consumer.assignment.interval.ms` (Kafka 4.3+): a group's target assignment is computed at most once per
interval, the first one at once, so a burst of joins costs one assignment rather than one per join; until the
interval has passed the group is Assigning and its members reconcile towards the current target."""

from __future__ import annotations

from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext, by_name
from tests.coordinator.consumer_group.written import Written


def test_the_first_target_is_computed_at_once_and_the_next_waits_for_the_interval() -> None:
    ctx = ConsumerGroupTestContext({"foo": 4}, consumer_group_assignment_interval_ms=1_000)
    first = ctx.join_cg(member_id="m1", topics=["foo"])
    assert (first.member_epoch, by_name(first, "foo")) == (2, {"foo": [0, 1, 2, 3]})

    ctx.advance(400)
    second = ctx.join_cg(member_id="m2", topics=["foo"])
    group = ctx.cg()
    assert (group.group_epoch, group.assignment_epoch, group.state.value) == (3, 2, "Assigning")
    assert (second.member_epoch, by_name(second, "foo")) == (2, {})  # reconciled towards the current target

    ctx.advance(599)
    ctx.cg_heartbeat(member_id="m1", member_epoch=2)
    assert ctx.cg().assignment_epoch == 2  # 999 ms: still within the interval

    ctx.advance(1)
    ctx.cg_heartbeat(member_id="m1", member_epoch=2)
    group = ctx.cg()
    assert (group.assignment_epoch, group.state.value) == (3, "Reconciling")
    assert sorted(len(parts) for target in group.target.values() for parts in target.values()) == [2, 2]


def test_a_burst_of_joins_costs_one_target_per_interval() -> None:
    ctx = ConsumerGroupTestContext({"foo": 100}, consumer_group_assignment_interval_ms=1_000)
    for i in range(50):
        ctx.join_cg(member_id=f"m{i:02d}", topics=["foo"])
    assert len(ctx.events.of("assignment.target")) == 1
    ctx.advance(1_000)
    ctx.cg_heartbeat(member_id="m00", member_epoch=2)
    computed = ctx.events.of("assignment.target")
    assert len(computed) == 2 and computed[-1]["members"] == 50


def test_a_leave_within_the_interval_leaves_the_group_assigning() -> None:
    ctx = ConsumerGroupTestContext({"foo": 2}, consumer_group_assignment_interval_ms=1_000)
    ctx.join_cg(member_id="m1", topics=["foo"])
    ctx.advance(1_000)
    ctx.join_cg(member_id="m2", topics=["foo"])
    written = Written(ctx)
    left = ctx.cg_heartbeat(member_id="m2", member_epoch=-1).value
    assert left.member_epoch == -1
    group = ctx.cg()
    assert (group.group_epoch, group.assignment_epoch, group.state.value) == (4, 3, "Assigning")
    assert "TargetAssignmentMetadata" not in " ".join(written.kinds())
