"""Transaction version 2 (KIP-890 part 2; EndTxn v5, AddPartitionsToTxn v4+, the implicit add): T70-T77."""

from __future__ import annotations

import pytest

from coordinator.transactions import TransactionResult
from coordinator.transactions import TransactionState as S
from protocol.errors import ErrorCode
from protocol.messages.end_txn import EndTxnResponse
from tests.coordinator.transactions.harness import TxnTestContext

NONE = ErrorCode.NONE
V2 = 5
"""EndTxn v5: the first version whose client runs transaction version 2."""
EXHAUSTED = 32766


@pytest.fixture
def ctx() -> TxnTestContext:
    return TxnTestContext(transaction_version=2)


def end_v2(ctx: TxnTestContext, producer_id: int, epoch: int, commit: bool) -> EndTxnResponse:
    response: EndTxnResponse = ctx.end_reply("txn", producer_id, epoch, commit, version=V2).value
    return response


def answer(response: EndTxnResponse) -> tuple[ErrorCode, int, int]:
    return ErrorCode(response.error_code), response.producer_id, response.producer_epoch


def implicit_add(ctx: TxnTestContext, producer_id: int, epoch: int, partitions: list[tuple[str, int]]) -> ErrorCode:
    """What a Produce v12 / TxnOffsetCommit v5 asks the coordinator for (the broker's implicit add)."""
    return ctx.coordinator.add_partitions("txn", producer_id, epoch, partitions, ctx.now_ms, ctx.wall_ms).value


def ongoing_v2(ctx: TxnTestContext) -> tuple[int, int]:
    producer_id, epoch = ctx.init_ok("txn")
    assert implicit_add(ctx, producer_id, epoch, [("orders", 0)]) == NONE
    return producer_id, epoch


def test_t70_the_client_transaction_version_comes_from_the_request_version(ctx: TxnTestContext) -> None:
    producer_id, epoch = ctx.init_ok("txn")
    assert ctx.add_partitions("txn", producer_id, epoch, {"orders": [0]}, version=3) == {("orders", 0): NONE}
    assert ctx.txn().client_transaction_version == 0
    assert ctx.add_partitions("txn", producer_id, epoch, {"orders": [1]}, version=5) == {("orders", 1): NONE}
    assert ctx.txn().client_transaction_version == 2
    last = ctx.log()[-1]
    assert last is not None and last.client_transaction_version == 2  # persisted (ClientTransactionVersion)
    assert implicit_add(ctx, producer_id, epoch, [("orders", 2)]) == NONE
    assert ctx.txn().client_transaction_version == 2


@pytest.mark.parametrize("commit", [True, False])
def test_t71_end_txn_v5_bumps_the_epoch_at_prepare_and_answers_it(ctx: TxnTestContext, commit: bool) -> None:
    producer_id, epoch = ongoing_v2(ctx)
    assert answer(end_v2(ctx, producer_id, epoch, commit)) == (NONE, producer_id, epoch + 1)
    prepare = ctx.log()[-1]
    assert prepare is not None and prepare.producer_epoch == epoch + 1 and prepare.next_producer_id == -1
    [markers] = ctx.write_markers()
    assert (markers.producer_id, markers.producer_epoch) == (producer_id, epoch + 1)
    assert markers.result is (TransactionResult.COMMIT if commit else TransactionResult.ABORT)
    assert markers.transaction_version == 2
    assert ctx.state() is (S.COMPLETE_COMMIT if commit else S.COMPLETE_ABORT)
    assert (ctx.txn().producer_id, ctx.txn().producer_epoch) == (producer_id, epoch + 1)
    # The next transaction runs at the new epoch; the old one is fenced.
    assert implicit_add(ctx, producer_id, epoch, [("orders", 0)]) == ErrorCode.PRODUCER_FENCED
    assert implicit_add(ctx, producer_id, epoch + 1, [("orders", 0)]) == NONE


def test_t72_an_exhausted_epoch_rotates_to_the_next_producer_id(ctx: TxnTestContext) -> None:
    ctx.seed("txn", producer_id=7, producer_epoch=EXHAUSTED, transaction_status=S.COMPLETE_COMMIT.value)
    assert implicit_add(ctx, 7, EXHAUSTED, [("orders", 0)]) == NONE
    new_id = ctx.producer_ids.allocate() + 1  # the allocator's next id (the probe used one)
    assert answer(end_v2(ctx, 7, EXHAUSTED, True)) == (NONE, new_id, 0)
    prepare = ctx.log()[-1]
    assert prepare is not None
    assert (prepare.producer_id, prepare.producer_epoch, prepare.next_producer_id) == (7, EXHAUSTED + 1, new_id)
    [markers] = ctx.write_markers()
    assert (markers.producer_id, markers.producer_epoch) == (7, EXHAUSTED + 1)  # the old id's last epoch
    complete = ctx.log()[-1]
    assert complete is not None
    assert (complete.producer_id, complete.producer_epoch, complete.previous_producer_id) == (new_id, 0, 7)
    assert complete.next_producer_id == -1
    assert implicit_add(ctx, new_id, 0, [("orders", 0)]) == NONE


@pytest.mark.parametrize("state", [S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT])
def test_t73_an_abort_without_a_transaction_bumps_the_epoch_and_writes_no_markers(
    ctx: TxnTestContext, state: S
) -> None:
    producer_id, epoch = ctx.init_ok("txn")
    if state is not S.EMPTY:
        assert implicit_add(ctx, producer_id, epoch, [("orders", 0)]) == NONE
        epoch = end_v2(ctx, producer_id, epoch, state is S.COMPLETE_COMMIT).producer_epoch
        ctx.write_markers()
    assert ctx.state() is state
    ctx.sleep(5)
    assert answer(end_v2(ctx, producer_id, epoch, False)) == (NONE, producer_id, epoch + 1)
    assert ctx.sink.outstanding == []
    assert ctx.logged_states()[-2:] == ["PrepareAbort", "CompleteAbort"]
    prepare = ctx.log()[-2]
    assert prepare is not None and prepare.transaction_start_timestamp_ms == ctx.wall_ms
    assert ctx.txn().producer_epoch == epoch + 1


@pytest.mark.parametrize(
    ("state", "commit", "retry", "expected"),
    [
        (S.EMPTY, True, False, ErrorCode.INVALID_TXN_STATE),
        (S.EMPTY, True, True, ErrorCode.PRODUCER_FENCED),
        (S.EMPTY, False, True, ErrorCode.PRODUCER_FENCED),
        (S.COMPLETE_COMMIT, True, True, NONE),
        (S.COMPLETE_COMMIT, True, False, ErrorCode.INVALID_TXN_STATE),
        (S.COMPLETE_COMMIT, False, True, ErrorCode.INVALID_TXN_STATE),
        (S.COMPLETE_ABORT, False, True, NONE),
        (S.COMPLETE_ABORT, True, True, ErrorCode.INVALID_TXN_STATE),
        (S.COMPLETE_ABORT, True, False, ErrorCode.INVALID_TXN_STATE),
        # While the markers are written the completion is pending, which Kafka 4.4 checks first: any EndTxn is
        # concurrent, as in version 0/1.
        (S.PREPARE_COMMIT, True, True, ErrorCode.CONCURRENT_TRANSACTIONS),
        (S.PREPARE_ABORT, True, True, ErrorCode.CONCURRENT_TRANSACTIONS),
        (S.PREPARE_COMMIT, True, False, ErrorCode.CONCURRENT_TRANSACTIONS),
    ],
)
def test_t74_retries_are_told_from_new_requests_by_the_epoch(
    ctx: TxnTestContext, state: S, commit: bool, retry: bool, expected: ErrorCode
) -> None:
    producer_id, epoch = ctx.init_ok("txn")
    if state is not S.EMPTY:
        assert implicit_add(ctx, producer_id, epoch, [("orders", 0)]) == NONE
        ended = state in (S.COMPLETE_COMMIT, S.PREPARE_COMMIT)
        assert answer(end_v2(ctx, producer_id, epoch, ended))[0] == NONE
        if state in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
            ctx.write_markers()
        epoch += 1
    assert ctx.state() is state
    appends = ctx.store.appends
    error, answered_id, answered_epoch = answer(end_v2(ctx, producer_id, epoch - 1 if retry else epoch, commit))
    assert error == expected
    assert (answered_id, answered_epoch) == ((producer_id, epoch) if error == NONE else (-1, -1))
    assert ctx.store.appends == appends  # refusals and retries write nothing


def test_t74_a_retry_after_a_rotation_names_the_previous_producer_id(ctx: TxnTestContext) -> None:
    ctx.seed("txn", producer_id=7, producer_epoch=EXHAUSTED, transaction_status=S.COMPLETE_COMMIT.value)
    assert implicit_add(ctx, 7, EXHAUSTED, [("orders", 0)]) == NONE
    _, new_id, _ = answer(end_v2(ctx, 7, EXHAUSTED, True))
    ctx.write_markers()
    assert answer(end_v2(ctx, 7, EXHAUSTED, True)) == (NONE, new_id, 0)
    assert answer(end_v2(ctx, 7, EXHAUSTED - 1, True))[0] == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert answer(end_v2(ctx, 8, EXHAUSTED, True))[0] == ErrorCode.INVALID_PRODUCER_ID_MAPPING


@pytest.mark.parametrize("server_version", [0, 2])
def test_t75_a_timed_out_transaction_is_fenced_and_aborted_by_the_servers_transaction_version(
    server_version: int,
) -> None:
    """The fence and the abort bump the epoch once together under both versions (version 2 clears the fence and
    bumps to its epoch, as Kafka 4.4 does); the abort is recorded as one of the server's version."""
    ctx = TxnTestContext(transaction_version=server_version, abort_timed_out_transactions_interval_ms=1000)
    producer_id, epoch = ctx.init_ok("txn", timeout_ms=5000)
    assert implicit_add(ctx, producer_id, epoch, [("orders", 0)]) == NONE
    ctx.sleep(7000)
    [markers] = ctx.write_markers()
    assert (markers.producer_epoch, markers.result) == (epoch + 1, TransactionResult.ABORT)
    assert markers.transaction_version == server_version
    prepare = ctx.log()[-2]
    assert prepare is not None and prepare.client_transaction_version == server_version
    assert ctx.state() is S.COMPLETE_ABORT and ctx.txn().producer_epoch == epoch + 1
    # The old producer's commit reads as a retry (one epoch below) of an outcome that was an abort.
    assert answer(end_v2(ctx, producer_id, epoch, True))[0] == ErrorCode.INVALID_TXN_STATE
    assert implicit_add(ctx, producer_id, epoch, [("orders", 0)]) == ErrorCode.PRODUCER_FENCED


def test_t75_a_fence_at_an_exhausted_epoch_rotates_the_producer_id_under_version_2() -> None:
    ctx = TxnTestContext(transaction_version=2)
    ctx.seed("txn", producer_id=7, producer_epoch=EXHAUSTED, transaction_status=S.COMPLETE_COMMIT.value)
    assert implicit_add(ctx, 7, EXHAUSTED, [("orders", 0)]) == NONE
    assert ctx.coordinator.abort_now("txn", ctx.now_ms, ctx.wall_ms)
    [markers] = ctx.write_markers()
    assert (markers.producer_id, markers.producer_epoch) == (7, EXHAUSTED + 1)
    txn = ctx.txn()
    assert (txn.state, txn.producer_epoch, txn.previous_producer_id) == (S.COMPLETE_ABORT, 0, 7)
    assert txn.producer_id != 7


@pytest.mark.parametrize("state", [S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT])
def test_t76_the_implicit_add_begins_a_transaction(ctx: TxnTestContext, state: S) -> None:
    producer_id, epoch = ctx.init_ok("txn")
    if state is not S.EMPTY:
        assert implicit_add(ctx, producer_id, epoch, [("orders", 0)]) == NONE
        epoch = end_v2(ctx, producer_id, epoch, state is S.COMPLETE_COMMIT).producer_epoch
        ctx.write_markers()
    ctx.sleep(10)
    assert implicit_add(ctx, producer_id, epoch, [("orders", 1)]) == NONE
    txn = ctx.txn()
    assert (txn.state, txn.partitions, txn.start_timestamp_ms) == (S.ONGOING, {("orders", 1)}, ctx.wall_ms)


def test_t76_the_implicit_add_refuses_as_add_partitions_does(ctx: TxnTestContext) -> None:
    producer_id, epoch = ongoing_v2(ctx)
    assert implicit_add(ctx, producer_id + 1, epoch, [("orders", 1)]) == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert implicit_add(ctx, producer_id, epoch + 1, [("orders", 1)]) == ErrorCode.PRODUCER_FENCED
    end_v2(ctx, producer_id, epoch, True)
    # The outcome is decided but its markers are not written: the next transaction waits.
    assert implicit_add(ctx, producer_id, epoch + 1, [("orders", 1)]) == ErrorCode.CONCURRENT_TRANSACTIONS


def test_t77_a_decided_version_2_transaction_resumes_after_a_restart(ctx: TxnTestContext) -> None:
    ctx.seed("txn", producer_id=7, producer_epoch=EXHAUSTED, transaction_status=S.COMPLETE_COMMIT.value)
    assert implicit_add(ctx, 7, EXHAUSTED, [("orders", 0)]) == NONE
    _, new_id, _ = answer(end_v2(ctx, 7, EXHAUSTED, False))
    ctx.restart()  # kill -9 between PrepareAbort and the markers
    txn = ctx.txn()
    assert (txn.state, txn.producer_epoch, txn.next_producer_id, txn.client_transaction_version) == (
        S.PREPARE_ABORT,
        EXHAUSTED + 1,
        new_id,
        2,
    )
    [markers] = ctx.write_markers()
    assert (markers.producer_id, markers.producer_epoch, markers.transaction_version) == (7, EXHAUSTED + 1, 2)
    assert (ctx.state(), ctx.txn().producer_id, ctx.txn().producer_epoch) == (S.COMPLETE_ABORT, new_id, 0)
    assert answer(end_v2(ctx, 7, EXHAUSTED, False)) == (NONE, new_id, 0)  # the retry the restart made necessary


@pytest.mark.parametrize(("server_version", "value_version"), [(0, 0), (1, 1), (2, 1)])
def test_t51_the_log_value_version_follows_the_servers_transaction_version(
    server_version: int, value_version: int
) -> None:
    """Kafka writes TransactionLogValue v1 (with the tagged previous/next producer ids and client transaction
    version) from transaction.version 1 on, v0 below."""
    ctx = TxnTestContext(transaction_version=server_version)
    ctx.begin("txn")
    partition = ctx.coordinator.partition_for("txn")
    assert {r.value_version for r in ctx.store.records(partition)} == {value_version}
