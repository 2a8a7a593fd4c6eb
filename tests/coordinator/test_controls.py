"""Operator controls take Kafka's own paths: an expiry is a session expiry, a forced rebalance a real rebalance."""

from __future__ import annotations

from coordinator.state import GroupState
from tests.coordinator.harness import CoordinatorTestContext


def test_expire_member_now_removes_it_and_rebalances_like_a_session_expiry() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2)
    victim = g.member_ids[1]
    assert ctx.coordinator.expire_member_now("g", victim, ctx.now_ms)
    group = ctx.group("g")
    assert not group.has_member(victim)
    assert group.state is GroupState.PREPARING_REBALANCE
    assert ctx.events.of("member.expired")[-1]["reason"] == "expired by operator"
    assert not ctx.coordinator.expire_member_now("g", "nobody", ctx.now_ms)
    assert not ctx.coordinator.expire_member_now("no-such-group", victim, ctx.now_ms)


def test_force_rebalance_moves_a_stable_group_to_preparing_and_reports_who_it_waits_for() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 3)
    assert ctx.coordinator.waiting_for("g") == []
    assert ctx.coordinator.force_rebalance("g", ctx.now_ms, reason="test says so")
    assert ctx.group("g").state is GroupState.PREPARING_REBALANCE
    assert ctx.events.of("rebalance.started")[-1]["reason"] == "test says so"
    assert sorted(ctx.coordinator.waiting_for("g")) == sorted(g.member_ids)
    views = {v.member_id: v for v in ctx.coordinator.member_views("g")}
    assert set(views) == set(g.member_ids)
    assert all(v.session_deadline_ms is not None and not v.awaiting_join for v in views.values())
    assert not ctx.coordinator.force_rebalance("g", ctx.now_ms)  # already rebalancing
