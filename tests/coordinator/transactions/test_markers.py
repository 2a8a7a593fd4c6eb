"""The markers contract with the broker (Kafka's TransactionMarkerChannelManager minus the network): T32-T34.

The coordinator hands the broker one `TxnMarkers` per decided transaction; the broker writes a control batch to
each partition and answers `markers_written` with the per-partition errors; once every partition is written the
coordinator writes CompleteCommit/CompleteAbort.
"""

from __future__ import annotations

import pytest

from coordinator.transactions import TransactionResult
from coordinator.transactions import TransactionState as S
from protocol.errors import ErrorCode
from tests.coordinator.transactions.harness import TxnTestContext

ORDERS_0, ORDERS_1 = ("orders", 0), ("orders", 1)


@pytest.fixture
def ctx() -> TxnTestContext:
    return TxnTestContext(retry_backoff_ms=100)


def committed(ctx: TxnTestContext) -> tuple[int, int]:
    producer_id, epoch = ctx.begin("txn", {"orders": [0, 1]})
    assert ctx.end("txn", producer_id, epoch, commit=True) == ErrorCode.NONE
    return producer_id, epoch


def test_t33_markers_name_the_transaction_its_outcome_and_partitions(ctx: TxnTestContext) -> None:
    producer_id, epoch = committed(ctx)
    [markers] = ctx.sink.sent
    assert markers.result is TransactionResult.COMMIT and markers.result.value == 1  # ControlRecordType COMMIT
    assert (markers.transactional_id, markers.producer_id, markers.producer_epoch) == ("txn", producer_id, epoch)
    assert markers.partitions == (ORDERS_0, ORDERS_1)
    assert ctx.coordinator.pending_markers() == [markers]
    assert ctx.events.of("txn.markers_sent")[0]["result"] == "COMMIT"


def test_t32_partial_answers_complete_only_when_every_partition_is_written(ctx: TxnTestContext) -> None:
    committed(ctx)
    [markers] = ctx.sink.outstanding
    ctx.coordinator.markers_written(markers, ctx.now_ms, errors={ORDERS_1: ErrorCode.NOT_LEADER_OR_FOLLOWER})
    assert ctx.state() is S.PREPARE_COMMIT
    ctx.coordinator.markers_written(markers, ctx.now_ms, errors={ORDERS_1: ErrorCode.NOT_LEADER_OR_FOLLOWER})
    assert ctx.state() is S.PREPARE_COMMIT  # an answer repeated changes nothing


def test_t34_retriable_errors_are_sent_again_for_those_partitions_only(ctx: TxnTestContext) -> None:
    committed(ctx)
    ctx.write_markers(errors={ORDERS_1: ErrorCode.NOT_LEADER_OR_FOLLOWER})
    assert ctx.state() is S.PREPARE_COMMIT and ctx.sink.outstanding == []
    ctx.sleep(99)
    assert ctx.sink.outstanding == []
    ctx.sleep(1)
    [retry] = ctx.sink.outstanding
    assert retry.partitions == (ORDERS_1,) and retry.result is TransactionResult.COMMIT
    assert ctx.events.of("txn.markers_failed")[0]["error"] == "NOT_LEADER_OR_FOLLOWER"
    ctx.write_markers()
    assert ctx.state() is S.COMPLETE_COMMIT


@pytest.mark.parametrize("error", [ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT, ErrorCode.UNSUPPORTED_VERSION])
def test_t34_partitions_that_cannot_take_markers_are_dropped(ctx: TxnTestContext, error: ErrorCode) -> None:
    committed(ctx)
    ctx.write_markers(errors={ORDERS_0: error})
    assert ctx.state() is S.COMPLETE_COMMIT


@pytest.mark.parametrize("error", [ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.TRANSACTION_COORDINATOR_FENCED])
def test_t34_a_newer_epoch_or_coordinator_stops_the_markers(ctx: TxnTestContext, error: ErrorCode) -> None:
    committed(ctx)
    ctx.write_markers(errors={ORDERS_0: error})
    ctx.sleep(10_000)
    assert ctx.sink.outstanding == [] and ctx.coordinator.pending_markers() == []
    assert (ctx.state(), ctx.txn().pending_state) == (S.PREPARE_COMMIT, S.COMPLETE_COMMIT)  # as Kafka leaves it
    assert ctx.events.of("txn.markers_abandoned")[0]["error"] == error.name


def test_t34_an_answer_for_markers_no_longer_pending_is_ignored(ctx: TxnTestContext) -> None:
    committed(ctx)
    [markers] = ctx.write_markers()
    appends = ctx.store.appends
    ctx.coordinator.markers_written(markers, ctx.now_ms)
    assert ctx.store.appends == appends and ctx.state() is S.COMPLETE_COMMIT


def test_t32_a_failed_complete_write_is_retried_until_it_lands(ctx: TxnTestContext) -> None:
    committed(ctx)
    ctx.store.fail_next(ErrorCode.KAFKA_STORAGE_ERROR, count=2)
    ctx.write_markers()
    assert (ctx.state(), ctx.txn().pending_state) == (S.PREPARE_COMMIT, S.COMPLETE_COMMIT)
    ctx.sleep(100)
    assert ctx.state() is S.PREPARE_COMMIT
    ctx.sleep(100)
    assert ctx.state() is S.COMPLETE_COMMIT
    assert ctx.logged_states()[-1] == "CompleteCommit"


def test_t32_an_abort_without_partitions_completes_without_markers(ctx: TxnTestContext) -> None:
    producer_id, epoch = ctx.begin("txn", {"orders": [0]})
    ctx.txn().partitions.clear()  # Kafka allows it; our clients never send EndTxn for an empty Ongoing txn
    assert ctx.end("txn", producer_id, epoch, commit=False) == ErrorCode.NONE
    assert ctx.sink.sent == []
    assert ctx.state() is S.COMPLETE_ABORT


def test_t55_unloading_cancels_the_markers_and_a_late_answer_is_ignored(ctx: TxnTestContext) -> None:
    committed(ctx)
    partition = ctx.coordinator.partition_for("txn")
    ctx.coordinator.unload_partition(partition, ctx.now_ms)
    assert ctx.coordinator.pending_markers() == []
    ctx.write_markers()
    assert ctx.logged_states() == ["Empty", "Ongoing", "PrepareCommit"]
