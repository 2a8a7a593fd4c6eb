"""The consumer-group controls and views on a manual clock: fencing a member now, forcing a new target, and what a
reconciliation waits for."""

from __future__ import annotations

from coordinator.consumer_group.group import ConsumerGroupState
from coordinator.consumer_group.views import reconciliation_waits
from protocol.consumer_offsets import ConsumerGroupMetadataKey
from protocol.errors import ErrorCode
from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext, by_name


def _two_members() -> ConsumerGroupTestContext:
    """m1 reconciled on foo-0..3, then m2 joins and m1 heartbeats: m1 must revoke two partitions m2 waits for."""
    ctx = ConsumerGroupTestContext({"foo": 4})
    first = ctx.join_cg(member_id="m1")
    ctx.cg_heartbeat(member_id="m1", member_epoch=first.member_epoch, owned={"foo": range(4)})
    ctx.join_cg(member_id="m2")
    ctx.cg_heartbeat(member_id="m1", member_epoch=first.member_epoch, owned={"foo": range(4)})
    return ctx


def test_expiring_a_member_now_fences_it_as_its_session_expiry_would() -> None:
    ctx = _two_members()
    epoch = ctx.cg().group_epoch
    ctx.events.clear()
    assert ctx.coordinator.expire_consumer_member_now("group", "m1", ctx.now_ms)
    group = ctx.cg()
    assert list(group.members) == ["m2"] and group.group_epoch == epoch + 1
    assert [e["reason"] for e in ctx.events.of("member.expired")] == ["expired by operator"]
    assert ctx.events.of("group.epoch")[0]["reason"].startswith("member m1 removed: expired by operator")
    assert ctx.cg_heartbeat(member_id="m1", member_epoch=2).value.error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert not ctx.coordinator.expire_consumer_member_now("group", "m1", ctx.now_ms)
    assert not ctx.coordinator.expire_consumer_member_now("nope", "m2", ctx.now_ms)


def test_forcing_a_target_assignment_bumps_the_epoch_and_the_next_heartbeat_computes_one() -> None:
    ctx = ConsumerGroupTestContext({"foo": 2})
    joined = ctx.join_cg(member_id="m1")
    ctx.cg_heartbeat(member_id="m1", member_epoch=joined.member_epoch, owned={"foo": [0, 1]})
    group = ctx.cg()
    assert group.state is ConsumerGroupState.STABLE
    epoch = group.group_epoch
    written = len(ctx.store.records(group.partition))
    assert ctx.coordinator.force_target_assignment("group", ctx.now_ms, "test wants a new target")
    assert (group.group_epoch, group.assignment_epoch, group.state) == (epoch + 1, epoch, ConsumerGroupState.ASSIGNING)
    new = ctx.store.records(group.partition)[written:]
    assert [type(r.key) for r in new] == [ConsumerGroupMetadataKey]
    assert ctx.events.of("group.epoch")[-1]["reason"] == "test wants a new target"
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=joined.member_epoch, owned={"foo": [0, 1]}).value
    assert response.member_epoch == epoch + 1 and group.assignment_epoch == epoch + 1
    assert group.state is ConsumerGroupState.STABLE and by_name(response, "foo") in (None, {"foo": [0, 1]})
    assert not ctx.coordinator.force_target_assignment("nope", ctx.now_ms)


def test_a_forced_target_assignment_whose_write_fails_leaves_the_group_as_it_was() -> None:
    ctx = ConsumerGroupTestContext({"foo": 2})
    ctx.join_cg(member_id="m1")
    group = ctx.cg()
    before = (group.group_epoch, group.assignment_epoch, group.state)
    ctx.store.fail_next(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    assert ctx.coordinator.force_target_assignment("group", ctx.now_ms)
    assert (group.group_epoch, group.assignment_epoch, group.state) == before


def test_an_empty_group_has_no_target_to_force() -> None:
    ctx = ConsumerGroupTestContext({"foo": 2})
    joined = ctx.join_cg(member_id="m1")
    ctx.cg_heartbeat(member_id="m1", member_epoch=-1)
    assert ctx.cg().state is ConsumerGroupState.EMPTY and joined.member_epoch
    assert not ctx.coordinator.force_target_assignment("group", ctx.now_ms)


def test_the_views_name_who_must_revoke_and_who_waits_for_whom() -> None:
    ctx = _two_members()
    views = {v.member_id: v for v in ctx.coordinator.consumer_member_views("group")}
    m1, m2 = views["m1"], views["m2"]
    assert m1.state == "UNREVOKED_PARTITIONS" and m2.state == "UNRELEASED_PARTITIONS"
    revoked = m1.pending_revocation["foo"]
    assert m1.assigned == {"foo": sorted({0, 1, 2, 3} - set(revoked))} and m2.target == {"foo": revoked}
    assert m2.assigned == {} and m2.waits_for == {"m1": {"foo": revoked}}
    assert m1.session_deadline_ms == ctx.now_ms + ctx.config.consumer_group_session_timeout_ms
    assert m1.revocation_deadline_ms == ctx.now_ms + 30_000 and m2.revocation_deadline_ms is None
    spelled = ",".join(f"foo-{p}" for p in revoked)
    assert reconciliation_waits(list(views.values())) == [
        f"waiting for member m1 to revoke partitions {spelled}",
        f"member m2 waits for partitions {spelled} held by m1",
    ]
