"""Session and rebalance (revocation) timers of consumer-protocol members (rules K31-K33 of
/work/notes/kip848-rules.md), on the manual clock: the session timeout is re-armed by every heartbeat and fences
the member when it passes; the rebalance timeout bounds a revocation and fires only at the epoch it was armed at.

Epochs are Kafka 4.4's (KAFKA-20268): a new group starts at epoch 1, written nowhere, and its first join writes
epoch 2, so a lone first member answers epoch 2."""

from __future__ import annotations

from coordinator.consumer_group.keys import revocation_key, session_key
from protocol.errors import ErrorCode
from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext, by_name
from tests.coordinator.consumer_group.written import Written, left

FENCE = left("m1")
"""m1 fenced (Kafka 4.4): its tombstones, then the epoch bump; m2's new target comes with its next heartbeat."""


def test_k31_every_heartbeat_pushes_the_session_deadline() -> None:
    """K31: the session deadline is now + group.consumer.session.timeout.ms after each successful heartbeat."""
    ctx = ConsumerGroupTestContext(
        topics={"foo": 1}, consumer_group_session_timeout_ms=50_000, consumer_group_max_session_timeout_ms=60_000
    )
    ctx.join_cg(member_id="m1")
    assert ctx.coordinator.timer.deadline(session_key("group", "m1")) == 50_000
    ctx.sleep(49_999)
    ctx.cg_heartbeat(member_id="m1", member_epoch=2)
    assert ctx.coordinator.timer.deadline(session_key("group", "m1")) == 99_999
    ctx.sleep(49_999)
    assert "m1" in ctx.cg().members


def test_k31_session_expiry_fences_the_member() -> None:
    """K31/K36: when the session passes, the member is fenced exactly like a -1 leave: its three records are
    tombstoned and the group epoch is bumped; the survivor's next heartbeat computes the new target and gets its
    partitions."""
    ctx = ConsumerGroupTestContext(topics={"foo": 2})
    ctx.join_cg(member_id="m1")
    ctx.sleep(10_000)
    ctx.join_cg(member_id="m2")
    written = Written(ctx)
    ctx.sleep(34_999)
    assert written.new() == []
    ctx.sleep(1)
    assert written.kinds() == FENCE
    assert ("m1" in ctx.cg().members, ctx.cg().group_epoch) == (False, 4)
    assert ctx.events.of("member.expired") == [
        {"group": "group", "member": "m1", "group_instance_id": None, "reason": "the member session expired"}
    ]
    response = ctx.cg_heartbeat(member_id="m2", member_epoch=3, owned={}).value
    assert (response.member_epoch, by_name(response, "foo")) == (4, {"foo": [0, 1]})


def test_k32_revocation_not_confirmed_within_the_rebalance_timeout_is_fenced() -> None:
    """K32: a member asked to revoke (UNREVOKED_PARTITIONS) gets its RebalanceTimeoutMs to confirm; past it, the
    member is fenced (Kafka 4.4's leave records, new target included) even though it keeps heartbeating."""
    ctx = ConsumerGroupTestContext(topics={"foo": 2})
    ctx.join_cg(member_id="m1", rebalance_timeout_ms=12_000)
    ctx.join_cg(member_id="m2")
    ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": [0, 1]})
    assert ctx.coordinator.timer.deadline(revocation_key("group", "m1")) == 12_000
    ctx.sleep(6_000)
    ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": [0, 1]})
    assert ctx.coordinator.timer.deadline(revocation_key("group", "m1")) == 12_000
    written = Written(ctx)
    ctx.sleep(6_000)
    assert written.kinds() == FENCE
    assert "m1" not in ctx.cg().members
    assert not ctx.coordinator.timer.contains(session_key("group", "m1"))
    (expired,) = ctx.events.of("member.expired")
    assert expired["reason"] == "the member failed to revoke partitions within its rebalance timeout"


def test_k32_confirmed_revocation_cancels_the_rebalance_timer() -> None:
    """K32: once the member confirms the revocation and reaches the target epoch the timer is cancelled."""
    ctx = ConsumerGroupTestContext(topics={"foo": 2})
    ctx.join_cg(member_id="m1", rebalance_timeout_ms=12_000)
    ctx.join_cg(member_id="m2")
    ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": [0, 1]})
    ctx.sleep(5_000)
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": [0]}).value
    assert response.member_epoch == 3
    assert not ctx.coordinator.timer.contains(revocation_key("group", "m1"))
    written = Written(ctx)
    ctx.sleep(10_000)
    assert written.new() == []
    assert "m1" in ctx.cg().members


def test_k33_leave_cancels_the_members_timers() -> None:
    """K33: a -1 leave cancels the session and rebalance timers: nothing fires later."""
    ctx = ConsumerGroupTestContext(topics={"foo": 2})
    ctx.join_cg(member_id="m1", rebalance_timeout_ms=12_000)
    ctx.join_cg(member_id="m2")
    ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": [0, 1]})
    assert ctx.coordinator.timer.contains(revocation_key("group", "m1"))
    ctx.cg_heartbeat(member_id="m1", member_epoch=-1)
    assert not ctx.coordinator.timer.contains(revocation_key("group", "m1"))
    assert not ctx.coordinator.timer.contains(session_key("group", "m1"))
    ctx.cg_heartbeat(member_id="m2", member_epoch=3, owned={})
    written = Written(ctx)
    ctx.sleep(44_000)
    assert written.new() == []


def test_k31_a_session_fence_whose_write_fails_keeps_the_member_with_a_new_session() -> None:
    """K31 with a failed write: the fence is undone (the member is back, with its epoch) and the member gets a
    fresh session, so a member whose session passed is fenced again later rather than kept forever."""
    ctx = ConsumerGroupTestContext(topics={"foo": 2})
    ctx.join_cg(member_id="m1")
    ctx.store.fail_next(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    ctx.sleep(45_000)
    group = ctx.cg()
    assert "m1" in group.members and group.group_epoch == 2
    assert ctx.coordinator.timer.deadline(session_key("group", "m1")) == ctx.now_ms + 45_000
    ctx.sleep(45_000)
    assert "m1" not in ctx.cg().members
