"""The transaction timeline's model without a broker: what it takes from requests no client of the end-to-end
tests sends (batched AddPartitionsToTxn v4, an idempotent producer's InitProducerId), its bounds, and a view of an
id the coordinator no longer knows."""

from __future__ import annotations

from typing import Any

from broker.context import ConnectionSession, RequestContext
from protocol.errors import ErrorCode
from protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnPartitionResult,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnResult,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTopicResult,
    AddPartitionsToTxnTransaction,
)
from protocol.messages.init_producer_id import InitProducerIdRequest, InitProducerIdResponse
from protocol.registry import ApiKey
from toolkit.timeline.text import render_transaction_text
from toolkit.timeline.transactions import TransactionTimeline


def _timeline(**bounds: int) -> tuple[TransactionTimeline, list[int]]:
    now = [1_000]
    return TransactionTimeline(lambda: now[0], lambda _: None, **bounds), now


def _ctx() -> RequestContext:
    return RequestContext(ConnectionSession(1, "127.0.0.1", 1), ApiKey.ADD_PARTITIONS_TO_TXN, 4, 7, "broker-1")


def _txn(transactional_id: str, verify_only: bool) -> AddPartitionsToTxnTransaction:
    return AddPartitionsToTxnTransaction(
        transactional_id=transactional_id,
        producer_id=5,
        producer_epoch=2,
        verify_only=verify_only,
        topics=[AddPartitionsToTxnTopic(name="orders", partitions=[1, 0])],
    )


def _result(transactional_id: str, error: ErrorCode) -> AddPartitionsToTxnResult:
    partitions = [AddPartitionsToTxnPartitionResult(partition_index=p, partition_error_code=error) for p in (0, 1)]
    return AddPartitionsToTxnResult(
        transactional_id=transactional_id,
        topic_results=[AddPartitionsToTxnTopicResult(name="orders", results_by_partition=partitions)],
    )


def test_a_batched_add_partitions_request_is_one_event_per_transaction_with_its_own_answer() -> None:
    timeline, _ = _timeline()
    request = AddPartitionsToTxnRequest(transactions=[_txn("a", False), _txn("b", True)])
    response = AddPartitionsToTxnResponse(
        results_by_transaction=[_result("a", ErrorCode.NONE), _result("b", ErrorCode.TRANSACTION_ABORTABLE)]
    )
    timeline.request_finished(_ctx(), ApiKey.ADD_PARTITIONS_TO_TXN, request, response, 0.0)
    [a] = timeline.events("a")
    [b] = timeline.events("b")
    assert (a.error, a.partitions, a.detail, a.producer_id, a.producer_epoch) == (
        None,
        ["orders-0", "orders-1"],
        None,
        5,
        2,
    )
    assert (b.error, b.detail) == ("TRANSACTION_ABORTABLE", {"verify_only": True})
    assert timeline.request_finished(_ctx(), ApiKey.ADD_PARTITIONS_TO_TXN, request, None, 0.0) is None
    assert timeline.events("a")[-1].error == "NO_RESPONSE"  # the handler failed: the client got no answer


def test_an_idempotent_producers_init_producer_id_is_no_transaction() -> None:
    timeline, _ = _timeline()
    request = InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=-1)
    timeline.request_finished(_ctx(), ApiKey.INIT_PRODUCER_ID, request, InitProducerIdResponse(), 0.0)
    assert timeline.transactional_ids() == []


def test_the_timeline_is_bounded_per_id_and_in_ids() -> None:
    timeline, now = _timeline(max_transactions=2, events_per_transaction=3)
    for transactional_id in ("a", "b", "a", "c"):
        now[0] += 10
        timeline.on_event("txn.fenced", {"transactional_id": transactional_id, "producer_id": 1, "producer_epoch": 1})
    assert timeline.transactional_ids() == ["a", "c"]  # b's last event is the oldest
    assert timeline.dropped_transactions == 1
    for _ in range(3):
        timeline.on_event("txn.fenced", {"transactional_id": "a", "producer_id": 1, "producer_epoch": 1})
    view: dict[str, Any] | None = timeline.view("a", None, now[0], 0)
    assert view is not None and view["dropped_events"] == 2 and len(view["events"]) == 3


def test_a_view_of_an_id_the_coordinator_no_longer_knows_says_so() -> None:
    timeline, now = _timeline()
    timeline.on_event(
        "txn.state",
        {"transactional_id": "gone", "producer_id": 3, "producer_epoch": 0, "old_state": "Empty", "new_state": "Dead"},
    )
    view = timeline.view("gone", None, now[0] + 5, 0)
    assert view is not None
    text = render_transaction_text(view)
    assert text.splitlines()[:3] == [
        "transaction gone",
        "  not known to the coordinator now (expired, unloaded or never initialised)",
        "  states: Empty +0.000s, Dead +0.000s",
    ]
    assert timeline.view("never", None, now[0], 0) is None


def test_each_request_event_names_its_principal_and_listener_the_coordinators_none() -> None:
    timeline, now = _timeline()
    session = ConnectionSession(2, "127.0.0.1", 2, "SSL", principal="User:CN=alice")
    ctx = RequestContext(session, ApiKey.ADD_PARTITIONS_TO_TXN, 4, 7, "app")
    request = AddPartitionsToTxnRequest(transactions=[_txn("a", False)])
    response = AddPartitionsToTxnResponse(results_by_transaction=[_result("a", ErrorCode.NONE)])
    timeline.request_finished(ctx, ApiKey.ADD_PARTITIONS_TO_TXN, request, response, 0.0)
    timeline.on_event("txn.state", {"transactional_id": "a", "old_state": "Empty", "new_state": "Ongoing"})
    view = timeline.view("a", None, now[0], 0)
    assert view is not None
    assert [(e["principal"], e["listener"]) for e in view["events"]] == [("User:CN=alice", "SSL"), (None, None)]
    assert "client=app principal=User:CN=alice listener=SSL partitions=orders-0,orders-1" in render_transaction_text(
        view
    )
    anonymous = RequestContext(ConnectionSession(3, "127.0.0.1", 3), ApiKey.ADD_PARTITIONS_TO_TXN, 4, 8, "app")
    timeline.request_finished(anonymous, ApiKey.ADD_PARTITIONS_TO_TXN, request, response, 0.0)
    last = timeline.view("a", None, now[0], 0)
    assert last is not None and "principal=" not in render_transaction_text(last).splitlines()[-1]
