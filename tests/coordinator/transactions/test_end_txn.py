"""EndTxn (transaction version 0/1, EndTxn v0-4): T17, T22, T28, T29, T32."""

from __future__ import annotations

import pytest

from coordinator.transactions import TransactionState as S
from protocol.errors import ErrorCode
from tests.coordinator.transactions.harness import TxnTestContext

NONE = ErrorCode.NONE
INVALID = ErrorCode.INVALID_TXN_STATE
CONCURRENT = ErrorCode.CONCURRENT_TRANSACTIONS


@pytest.fixture
def ctx() -> TxnTestContext:
    return TxnTestContext()


def in_state(ctx: TxnTestContext, state: S) -> tuple[int, int]:
    """A transactional id "txn" brought to `state` the way clients bring it there."""
    if state is S.EMPTY:
        return ctx.init_ok("txn")
    producer_id, epoch = ctx.begin("txn", {"orders": [0]})
    if state is S.ONGOING:
        return producer_id, epoch
    commit = state in (S.PREPARE_COMMIT, S.COMPLETE_COMMIT)
    assert ctx.end("txn", producer_id, epoch, commit) == NONE
    if state in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
        ctx.write_markers()
    assert ctx.state() is state
    return producer_id, epoch


@pytest.mark.parametrize(
    ("state", "commit", "expected"),
    [
        (S.EMPTY, True, INVALID),
        (S.EMPTY, False, INVALID),
        (S.ONGOING, True, NONE),
        (S.ONGOING, False, NONE),
        # While the markers are written the completion is pending: any EndTxn is concurrent (the pending check
        # comes before the state's, T28).
        (S.PREPARE_COMMIT, True, CONCURRENT),
        (S.PREPARE_COMMIT, False, CONCURRENT),
        (S.PREPARE_ABORT, True, CONCURRENT),
        (S.PREPARE_ABORT, False, CONCURRENT),
        (S.COMPLETE_COMMIT, True, NONE),
        (S.COMPLETE_COMMIT, False, INVALID),
        (S.COMPLETE_ABORT, True, INVALID),
        (S.COMPLETE_ABORT, False, NONE),
    ],
)
def test_t28_end_txn_by_state_and_result(ctx: TxnTestContext, state: S, commit: bool, expected: ErrorCode) -> None:
    producer_id, epoch = in_state(ctx, state)
    appends = ctx.store.appends
    assert ctx.end("txn", producer_id, epoch, commit) == expected
    if state is not S.ONGOING:
        assert ctx.store.appends == appends  # refusals and idempotent retries write nothing
        assert ctx.state() is state


@pytest.mark.parametrize(
    ("state", "commit", "expected"),
    [
        (S.PREPARE_COMMIT, True, CONCURRENT),
        (S.PREPARE_COMMIT, False, INVALID),
        (S.PREPARE_ABORT, True, INVALID),
        (S.PREPARE_ABORT, False, CONCURRENT),
    ],
)
def test_t22_t28_a_decided_transaction_without_a_pending_completion(
    ctx: TxnTestContext, state: S, commit: bool, expected: ErrorCode
) -> None:
    """Kafka reaches PrepareX without a pending completion when the completion write fails for good (the
    partition moved); the state table then answers."""
    producer_id, epoch = in_state(ctx, state)
    ctx.txn().pending_state = None
    assert ctx.end("txn", producer_id, epoch, commit) == expected


def test_t28_identity_checks_come_first(ctx: TxnTestContext) -> None:
    producer_id, epoch = in_state(ctx, S.ONGOING)
    assert ctx.end("", producer_id, epoch, True) == ErrorCode.INVALID_REQUEST
    assert ctx.end("nobody", producer_id, epoch, True) == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert ctx.end("txn", producer_id + 1, epoch, True) == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert ctx.end("txn", producer_id, epoch + 1, True) == ErrorCode.PRODUCER_FENCED  # from a client: exactly equal
    assert ctx.end("txn", producer_id, epoch - 1, True) == ErrorCode.PRODUCER_FENCED
    assert ctx.state() is S.ONGOING


def test_t28_commit_writes_prepare_commit_then_markers_then_complete_commit(ctx: TxnTestContext) -> None:
    producer_id, epoch = ctx.begin("txn", {"orders": [0, 1], "audit": [3]})
    assert ctx.end("txn", producer_id, epoch, commit=True) == NONE
    assert ctx.logged_states() == ["Empty", "Ongoing", "PrepareCommit"]
    prepare = ctx.log()[-1]
    assert prepare is not None and prepare.producer_epoch == epoch  # transaction version 0/1: no bump
    [markers] = ctx.sink.sent
    assert markers.transactional_id == "txn"
    assert (markers.producer_id, markers.producer_epoch, markers.coordinator_epoch) == (producer_id, epoch, 0)
    assert markers.committed
    assert markers.partitions == (("audit", 3), ("orders", 0), ("orders", 1))
    ctx.write_markers()
    assert ctx.logged_states() == ["Empty", "Ongoing", "PrepareCommit", "CompleteCommit"]
    txn = ctx.txn()
    assert (txn.state, txn.partitions, txn.pending_state) == (S.COMPLETE_COMMIT, set(), None)
    assert [e["new_state"] for e in ctx.events.of("txn.state")] == [
        "Empty",
        "Ongoing",
        "PrepareCommit",
        "CompleteCommit",
    ]


def test_t29_the_answer_comes_once_prepare_is_durable_not_when_the_markers_are() -> None:
    ctx = TxnTestContext(auto_durable=False)
    reply = ctx.init_reply("txn")
    ctx.store.flush()
    producer_id, epoch = reply.value.producer_id, reply.value.producer_epoch
    ctx.add_partitions_reply("txn", producer_id, epoch, {"orders": [0]})
    ctx.store.flush()
    end = ctx.end_reply("txn", producer_id, epoch, True)
    assert not end.done and ctx.sink.sent == []
    assert ctx.end("txn", producer_id, epoch, True) == CONCURRENT  # a transition is pending
    ctx.store.flush()
    assert ErrorCode(end.value.error_code) == NONE
    assert (end.value.producer_id, end.value.producer_epoch) == (-1, -1)  # only EndTxn v5 carries them
    assert len(ctx.sink.sent) == 1
    assert ctx.txn().pending_state is S.COMPLETE_COMMIT


def test_t29_a_failed_prepare_write_answers_the_error_and_sends_no_markers(ctx: TxnTestContext) -> None:
    producer_id, epoch = ctx.begin("txn")
    ctx.store.fail_next(ErrorCode.NOT_ENOUGH_REPLICAS)
    assert ctx.end("txn", producer_id, epoch, True) == ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert ctx.sink.sent == []
    assert (ctx.state(), ctx.txn().pending_state) == (S.ONGOING, None)
    assert ctx.end("txn", producer_id, epoch, True) == NONE  # the client's retry


def test_t29_the_partition_moving_away_during_the_write_is_not_coordinator() -> None:
    ctx = TxnTestContext(auto_durable=False)
    reply = ctx.init_reply("txn")
    ctx.store.flush()
    producer_id, epoch = reply.value.producer_id, reply.value.producer_epoch
    ctx.add_partitions_reply("txn", producer_id, epoch, {"orders": [0]})
    ctx.store.flush()
    end = ctx.end_reply("txn", producer_id, epoch, True)
    ctx.coordinator.unload_partition(ctx.coordinator.partition_for("txn"), ctx.now_ms)
    assert ErrorCode(end.value.error_code) == ErrorCode.NOT_COORDINATOR
    ctx.store.flush()  # the write landing afterwards changes nothing here
    assert ctx.sink.sent == []


@pytest.mark.parametrize(
    ("version", "expected"), [(1, ErrorCode.INVALID_PRODUCER_EPOCH), (2, ErrorCode.PRODUCER_FENCED)]
)
def test_t17_producer_fenced_is_invalid_producer_epoch_before_v2(
    ctx: TxnTestContext, version: int, expected: ErrorCode
) -> None:
    producer_id, epoch = in_state(ctx, S.ONGOING)
    assert ctx.end("txn", producer_id, epoch + 1, True, version=version) == expected
