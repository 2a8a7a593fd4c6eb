"""Consumer groups survive a coordinator restart (K56-K57): the records a group wrote rebuild it with the same
epochs, targets and member states, mid-reconciliation included, and it carries on from there."""

from __future__ import annotations

from coordinator.consumer_group.keys import revocation_key, session_key
from coordinator.consumer_group.member_state import MemberState
from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext, by_name


def _restarted(ctx: ConsumerGroupTestContext) -> ConsumerGroupTestContext:
    """A new coordinator over the same log and topics, at the same time (a broker restart)."""
    return ConsumerGroupTestContext(
        {"foo": 4}, store=ctx.store, start_ms=ctx.now_ms, consumer_group_session_timeout_ms=45_000
    )


def _mid_reconciliation() -> ConsumerGroupTestContext:
    """m1 owns foo 0-3; m2 joined, so m1 must revoke 2-3 before m2 can have them."""
    ctx = ConsumerGroupTestContext({"foo": 4})
    ctx.join_cg(member_id="m1", topics=["foo"])
    ctx.join_cg(member_id="m2", topics=["foo"])
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=2).value
    assert by_name(response, "foo") == {"foo": [0, 1]}
    return ctx


def test_k56_a_group_restarted_mid_reconciliation_resumes_with_the_same_epochs() -> None:
    before = _mid_reconciliation()
    old = before.cg()
    ctx = _restarted(before)
    group = ctx.cg()
    assert (group.group_epoch, group.assignment_epoch) == (old.group_epoch, old.assignment_epoch) == (3, 3)
    assert group.members == old.members
    assert group.target == old.target
    assert group.state.value == "Reconciling"
    assert group.members["m1"].state is MemberState.UNREVOKED_PARTITIONS
    assert group.owners == old.owners


def test_k57_loading_arms_a_full_session_for_every_member_and_the_revocation_timer_of_a_revoking_member() -> None:
    before = _mid_reconciliation()
    before.sleep(10_000)
    ctx = _restarted(before)
    timer = ctx.coordinator.timer
    assert timer.deadline(session_key("group", "m1")) == ctx.now_ms + 45_000
    assert timer.deadline(session_key("group", "m2")) == ctx.now_ms + 45_000
    assert timer.deadline(revocation_key("group", "m1")) == ctx.now_ms + 30_000
    assert timer.deadline(revocation_key("group", "m2")) is None


def test_k56_after_the_restart_the_revocation_completes_and_the_partitions_move() -> None:
    ctx = _restarted(_mid_reconciliation())
    revoked = ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo": [0, 1]}).value
    assert (revoked.error_code, revoked.member_epoch) == (0, 3)
    taken = ctx.cg_heartbeat(member_id="m2", member_epoch=3).value
    assert by_name(taken, "foo") == {"foo": [2, 3]}
    assert ctx.cg().state.value == "Stable"


def test_k56_a_member_that_left_before_the_restart_stays_gone_and_committed_offsets_stay_the_groups() -> None:
    before = _mid_reconciliation()
    before.commit(group_id="group", member_id="m2", generation_id=3, offsets={("foo", 2): 7}, version=9)
    left = before.cg_heartbeat(member_id="m2", member_epoch=-1).value
    assert left.member_epoch == -1
    ctx = _restarted(before)
    group = ctx.cg()
    assert list(group.members) == ["m1"]
    assert group.group_epoch == 4
    assert ctx.coordinator.group("group") is None  # the offsets did not make a classic group
    assert group.offsets.get("foo", 2) is not None
