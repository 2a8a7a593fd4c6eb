"""Structured events: every state change is visible as one snake_case event with ids as fields."""

from __future__ import annotations

from structlog.testing import capture_logs

from coordinator.config import CoordinatorConfig
from coordinator.context import RequestContext
from coordinator.coordinator import GroupCoordinator
from coordinator.persistence import InMemoryRecordStore
from protocol.messages.heartbeat import HeartbeatRequest
from tests.coordinator.harness import CoordinatorTestContext


def test_a_rebalance_can_be_reconstructed_from_events() -> None:
    ctx = CoordinatorTestContext()
    ctx.clock.advance(5)
    g = ctx.join_with_n_members("g", 2)
    ctx.commit(group_id="g", member_id=g.leader_id, generation_id=g.generation_id)
    ctx.sleep(10_000)  # both members die
    names = ctx.events.names()
    assert names[:4] == ["group.created", "member.id_required", "member.joined", "group.state"]
    started = ctx.events.of("rebalance.started")[0]
    assert started["group"] == "g" and started["reason"].startswith("adding new member")
    completed = ctx.events.of("rebalance.join_completed")[0]
    assert completed == {
        "group": "g",
        "generation": 1,
        "leader": g.leader_id,
        "protocol": "range",
        "members": g.member_ids,
    }
    done = ctx.events.of("rebalance.completed")[0]
    assert done["generation"] == 1 and done["duration_ms"] == 0 and done["members"] == g.member_ids
    committed = ctx.events.of("offsets.committed")[0]
    assert committed == {"group": "g", "member": g.leader_id, "generation": 1, "partitions": 1}
    expired = ctx.events.of("member.expired")
    assert sorted(e["member"] for e in expired) == sorted(g.member_ids)
    assert expired[0]["reason"] == "session timeout expired"
    transitions = [(e["old_state"], e["new_state"]) for e in ctx.events.of("group.state")]
    assert transitions == [
        ("Empty", "PreparingRebalance"),
        ("PreparingRebalance", "CompletingRebalance"),
        ("CompletingRebalance", "Stable"),
        ("Stable", "PreparingRebalance"),
        ("PreparingRebalance", "Empty"),
    ]


def test_events_go_to_structlog_by_default_and_heartbeats_log_nothing() -> None:
    coordinator = GroupCoordinator(CoordinatorConfig(group_initial_rebalance_delay_ms=0), InMemoryRecordStore())
    with capture_logs() as logs:
        coordinator.load_partition(coordinator.partition_for("g"), [], 0)
        reply = coordinator.join_group(
            RequestContext(api_version=3, client_id="c"),
            CoordinatorTestContext.join_request("g"),
            0,
        )
        coordinator.tick(0)
        member_id = reply.value.member_id
        before = len(logs)
        for _ in range(10):
            coordinator.heartbeat(
                RequestContext(api_version=4), HeartbeatRequest(group_id="g", member_id=member_id, generation_id=1), 1
            )
        assert len(logs) == before
    assert {"partition.loaded", "member.joined", "rebalance.join_completed"} <= {entry["event"] for entry in logs}
