"""Node events in the timelines without a broker (issue #19): each request event names the node that served it, and
a coordinator partition's leader change becomes a `coordinator.moved` event of every group or transactional id of
that partition, saying why (a node stopped or started, or a move)."""

from __future__ import annotations

from typing import Any

from broker.context import ConnectionSession, RequestContext
from protocol.errors import ErrorCode
from protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from protocol.messages.init_producer_id import InitProducerIdRequest, InitProducerIdResponse
from protocol.messages.leave_group import LeaveGroupRequest, LeaveGroupResponse
from protocol.registry import ApiKey
from toolkit.recorder import Recorder
from toolkit.timeline.coordinator_nodes import CoordinatorNodes
from toolkit.timeline.model import Timeline
from toolkit.timeline.text import render_text, render_transaction_text
from toolkit.timeline.transactions import TransactionTimeline

PARTITIONS = {"billing": 3, "audit": 1, "payments": 3}


def _ctx(api_key: int, node_id: int | None) -> RequestContext:
    return RequestContext(ConnectionSession(1, "127.0.0.1", 1, node_id=node_id), api_key, 0, 7, "app")


def _timelines() -> tuple[Timeline, TransactionTimeline, CoordinatorNodes]:
    groups = Timeline(lambda: 1_000)
    transactions = TransactionTimeline(lambda: 1_000, lambda _: None)
    return groups, transactions, CoordinatorNodes(groups, transactions, PARTITIONS.__getitem__, PARTITIONS.__getitem__)


def _leader_changed(topic: str, partition: int, before: int, after: int, cause: str) -> dict[str, Any]:
    return {
        "topic": topic,
        "partition": partition,
        "leader_before": before,
        "leader": after,
        "leader_epoch": 4,
        "cause": cause,
    }


def test_each_request_event_names_the_node_that_served_it() -> None:
    groups, transactions, _ = _timelines()
    beat = HeartbeatRequest(group_id="billing", generation_id=1, member_id="m1")
    groups.request_finished(_ctx(ApiKey.HEARTBEAT, 2), ApiKey.HEARTBEAT, beat, HeartbeatResponse(), 0.0)
    leave = LeaveGroupRequest(group_id="billing", member_id="m1")
    groups.request_finished(_ctx(ApiKey.LEAVE_GROUP, 3), ApiKey.LEAVE_GROUP, leave, LeaveGroupResponse(), 0.0)
    groups.on_event("member.removed", {"group": "billing", "member": "m1"})
    view = groups.view("billing", None, 1_000, 0)
    assert view is not None
    assert {e["kind"]: e["node"] for e in view["events"]} == {
        "Heartbeat": 2,
        "LeaveGroup": 3,
        "member.removed": None,  # the coordinator's own events are served by no node
    }
    assert "client=app node=2" in render_text(view)
    init = InitProducerIdRequest(transactional_id="payments", transaction_timeout_ms=60_000)
    answer = InitProducerIdResponse(error_code=ErrorCode.NONE, producer_id=5, producer_epoch=0)
    transactions.request_finished(_ctx(ApiKey.INIT_PRODUCER_ID, 1), ApiKey.INIT_PRODUCER_ID, init, answer, 0.0)
    txn_view = transactions.view("payments", None, 1_000, 0)
    assert txn_view is not None and [e["node"] for e in txn_view["events"]] == [1]
    assert "client=app node=1" in render_transaction_text(txn_view)
    one_node = _ctx(ApiKey.HEARTBEAT, None)  # a one-node broker names no node
    groups.request_finished(one_node, ApiKey.HEARTBEAT, beat, HeartbeatResponse(), 0.0)
    again = groups.view("billing", None, 1_000, 0)
    assert again is not None and "node=" not in render_text(again).splitlines()[-1]


def test_the_recorder_names_the_node_of_each_exchange() -> None:
    recorder = Recorder(lambda: 1_000)
    recorder.enabled = True
    beat = HeartbeatRequest(group_id="billing", generation_id=1, member_id="m1")
    recorder.request_finished(_ctx(ApiKey.HEARTBEAT, 2), ApiKey.HEARTBEAT, beat, HeartbeatResponse(), 0.0)
    [summary] = recorder.summaries()
    assert summary["node_id"] == 2


def test_a_coordinator_partitions_leader_change_is_a_move_in_its_groups_and_transactions_timelines() -> None:
    groups, transactions, nodes = _timelines()
    for group_id in ("billing", "audit"):
        groups.on_event("group.created", {"group": group_id})
    transactions.on_event("txn.state", {"transactional_id": "payments", "old_state": "Empty", "new_state": "Empty"})
    nodes.on_event("partition.leader_changed", _leader_changed("__consumer_offsets", 3, 2, 3, "node_stopped"))
    nodes.on_event("partition.leader_changed", _leader_changed("__consumer_offsets", 3, 3, 2, "node_started"))
    nodes.on_event("partition.leader_changed", _leader_changed("__transaction_state", 3, 1, 2, "moved"))
    nodes.on_event("partition.leader_changed", _leader_changed("orders", 3, 1, 2, "moved"))  # no coordinator
    nodes.on_event("node.stopped", {"node": 2, "leaders_moved": 1})  # its moves are the events above
    moves = [e for e in groups.events("billing") if e.kind == "coordinator.moved"]
    assert [(e.reason, e.detail) for e in moves] == [
        ("node 2 stopped", {"partition": 3, "node_before": 2, "node": 3, "leader_epoch": 4}),
        ("node 2 started", {"partition": 3, "node_before": 3, "node": 2, "leader_epoch": 4}),
    ]
    assert [e.kind for e in groups.events("audit")] == ["group.created"]  # another partition: not affected
    [moved] = [e for e in transactions.events("payments") if e.kind == "coordinator.moved"]
    assert moved.detail == {"partition": 3, "node_before": 1, "node": 2, "leader_epoch": 4, "reason": "moved"}
    view = groups.view("billing", None, 1_000, 0)
    assert view is not None
    assert "coordinator.moved" in render_text(view) and 'reason="node 2 stopped"' in render_text(view)
