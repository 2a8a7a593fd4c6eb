"""InitProducerId with (and without) a transactional id: section 2 of the transaction rules (T5-T17)."""

from __future__ import annotations

import pytest

from coordinator.transactions import TransactionState as S
from protocol.errors import ErrorCode
from tests.coordinator.transactions.harness import TxnTestContext


@pytest.fixture
def ctx() -> TxnTestContext:
    return TxnTestContext()


def error(response: object) -> ErrorCode:
    return ErrorCode(response.error_code)  # type: ignore[attr-defined]


def test_t5_without_transactional_id_a_fresh_producer_id_at_epoch_0_and_no_write(ctx: TxnTestContext) -> None:
    first, second = ctx.init(None), ctx.init(None)
    assert (first.producer_id, first.producer_epoch, error(first)) == (1000, 0, ErrorCode.NONE)
    assert (second.producer_id, second.producer_epoch) == (1001, 0)
    assert ctx.store.appends == 0


def test_t5_an_empty_transactional_id_is_invalid(ctx: TxnTestContext) -> None:
    response = ctx.init("")
    assert (error(response), response.producer_id, response.producer_epoch) == (ErrorCode.INVALID_REQUEST, -1, -1)


@pytest.mark.parametrize(("producer_id", "epoch"), [(5, -1), (-1, 3)])
def test_t6_producer_id_and_epoch_come_together_or_not_at_all(
    ctx: TxnTestContext, producer_id: int, epoch: int
) -> None:
    assert error(ctx.init("txn", producer_id=producer_id, producer_epoch=epoch)) == ErrorCode.INVALID_REQUEST


@pytest.mark.parametrize("timeout_ms", [0, -1, 900_001])
def test_t7_a_timeout_outside_1_to_the_maximum_is_refused(ctx: TxnTestContext, timeout_ms: int) -> None:
    assert error(ctx.init("txn", timeout_ms)) == ErrorCode.INVALID_TRANSACTION_TIMEOUT
    assert ctx.coordinator.transaction("txn") is None


def test_t7_the_maximum_itself_is_accepted(ctx: TxnTestContext) -> None:
    assert error(ctx.init("txn", 900_000)) == ErrorCode.NONE


def test_t7_the_timeout_is_checked_before_the_coordinator_is(ctx: TxnTestContext) -> None:
    partition = ctx.coordinator.partition_for("txn")
    ctx.coordinator.unload_partition(partition, ctx.now_ms)
    assert error(ctx.init("txn", 0)) == ErrorCode.INVALID_TRANSACTION_TIMEOUT
    assert error(ctx.init("txn")) == ErrorCode.NOT_COORDINATOR


def test_t9_t16_a_new_transactional_id_gets_a_producer_id_at_epoch_0_written_as_empty(ctx: TxnTestContext) -> None:
    assert ctx.init_ok("txn", timeout_ms=30_000) == (1000, 0)
    [value] = ctx.log("txn")
    assert value is not None
    assert (value.producer_id, value.producer_epoch, value.transaction_status) == (1000, 0, S.EMPTY.value)
    assert (value.transaction_timeout_ms, value.transaction_partitions) == (30_000, None)
    assert (value.transaction_last_update_timestamp_ms, value.transaction_start_timestamp_ms) == (ctx.wall_ms, -1)
    assert ctx.events.of("txn.state") == [
        {
            "transactional_id": "txn",
            "producer_id": 1000,
            "producer_epoch": 0,
            "old_state": "Empty",
            "new_state": "Empty",
            "partitions": 0,
        }
    ]


def test_t12_reinitialising_bumps_the_epoch_and_takes_the_new_timeout(ctx: TxnTestContext) -> None:
    ctx.init_ok("txn")
    assert ctx.init_ok("txn", timeout_ms=10_000) == (1000, 1)
    assert ctx.txn().timeout_ms == 10_000


def test_t16_the_answer_waits_until_the_write_is_durable() -> None:
    ctx = TxnTestContext(auto_durable=False)
    reply = ctx.init_reply("txn")
    assert not reply.done
    assert ctx.txn().pending_state is S.EMPTY
    assert error(ctx.init("txn")) == ErrorCode.CONCURRENT_TRANSACTIONS  # T10: a transition is pending
    ctx.store.flush()
    assert (reply.value.producer_id, reply.value.producer_epoch) == (1000, 0)
    assert ctx.txn().pending_state is None


def test_t52_a_failed_write_answers_the_mapped_error_and_leaves_the_id_usable(ctx: TxnTestContext) -> None:
    ctx.store.fail_next(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    failed = ctx.init("txn")
    assert (error(failed), failed.producer_id, failed.producer_epoch) == (ErrorCode.NOT_COORDINATOR, -1, -1)
    assert ctx.txn().pending_state is None
    # Kafka caches a new id before writing it: the retry reuses its producer id, still at epoch 0.
    assert ctx.init_ok("txn") == (1000, 0)
    assert ctx.events.of("txn_log.append_failed")[0]["error"] == "NOT_LEADER_OR_FOLLOWER"


def test_t52_a_write_that_times_out_answers_coordinator_not_available() -> None:
    ctx = TxnTestContext(auto_durable=False, write_timeout_ms=5_000)
    reply = ctx.init_reply("txn")
    ctx.sleep(5_000)
    assert error(reply.value) == ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert ctx.txn().pending_state is None


def test_t10_kip360_an_expected_producer_id_that_is_not_the_ids_is_fenced(ctx: TxnTestContext) -> None:
    ctx.init_ok("txn")
    assert error(ctx.init("txn", producer_id=999, producer_epoch=0)) == ErrorCode.PRODUCER_FENCED


def test_t13_kip360_recovery_bumps_from_the_expected_epoch(ctx: TxnTestContext) -> None:
    ctx.init_ok("txn")
    assert ctx.init_ok("txn", producer_id=1000, producer_epoch=0) == (1000, 1)
    assert ctx.txn().last_producer_epoch == 0


def test_t13_kip360_a_retry_whose_answer_was_lost_gets_the_same_epoch(ctx: TxnTestContext) -> None:
    ctx.init_ok("txn")
    ctx.init_ok("txn", producer_id=1000, producer_epoch=0)
    assert ctx.init_ok("txn", producer_id=1000, producer_epoch=0) == (1000, 1)


def test_t13_kip360_an_older_epoch_is_fenced(ctx: TxnTestContext) -> None:
    for _ in range(3):
        ctx.init_ok("txn")
    assert error(ctx.init("txn", producer_id=1000, producer_epoch=0)) == ErrorCode.PRODUCER_FENCED
    assert ctx.txn().pending_state is None


def test_t10_kip360_an_expired_id_recovers_with_a_new_producer_id(ctx: TxnTestContext) -> None:
    assert ctx.init_ok("txn", producer_id=42, producer_epoch=7) == (1000, 0)


def test_t11_while_markers_are_written_reinit_is_concurrent(ctx: TxnTestContext) -> None:
    producer_id, epoch = ctx.begin("txn")
    assert ctx.end("txn", producer_id, epoch, commit=True) == ErrorCode.NONE
    assert error(ctx.init("txn")) == ErrorCode.CONCURRENT_TRANSACTIONS
    ctx.write_markers()
    assert ctx.init_ok("txn") == (producer_id, epoch + 1)


def test_t12_an_exhausted_epoch_rotates_to_a_new_producer_id(ctx: TxnTestContext) -> None:
    ctx.seed("txn", producer_id=500, producer_epoch=32766, transaction_status=S.COMPLETE_COMMIT.value)
    assert ctx.init_ok("txn") == (1000, 0)
    txn = ctx.txn()
    assert (txn.previous_producer_id, txn.last_producer_epoch) == (500, -1)


def test_t10_t12_t13_rotation_with_an_expected_epoch_survives_a_lost_answer(ctx: TxnTestContext) -> None:
    ctx.seed("txn", producer_id=500, producer_epoch=32766, transaction_status=S.COMPLETE_ABORT.value)
    assert ctx.init_ok("txn", producer_id=500, producer_epoch=32766) == (1000, 0)
    assert ctx.txn().last_producer_epoch == 32766
    assert ctx.init_ok("txn", producer_id=500, producer_epoch=32766) == (1000, 0)  # the retry: same answer


def test_t14_reinit_during_a_transaction_fences_and_aborts_it() -> None:
    ctx = TxnTestContext(auto_durable=False)
    reply = ctx.init_reply("txn")
    ctx.store.flush()
    producer_id, epoch = reply.value.producer_id, reply.value.producer_epoch
    added = ctx.add_partitions_reply("txn", producer_id, epoch, {"orders": [0, 1]})
    ctx.store.flush()
    assert added.done
    zombie_fence = ctx.init_reply("txn")
    assert not zombie_fence.done  # answered once the abort is durable
    assert ctx.txn().pending_state is S.PREPARE_ABORT
    ctx.store.flush()
    assert error(zombie_fence.value) == ErrorCode.CONCURRENT_TRANSACTIONS
    assert ctx.logged_states() == ["Empty", "Ongoing", "PrepareAbort"]
    prepare_abort = ctx.log()[-1]
    assert prepare_abort is not None and prepare_abort.producer_epoch == epoch + 1  # the fence epoch
    [markers] = ctx.sink.sent
    assert (markers.committed, markers.producer_epoch, markers.partitions) == (
        False,
        epoch + 1,
        (("orders", 0), ("orders", 1)),
    )
    assert ctx.end("txn", producer_id, epoch, commit=True) == ErrorCode.PRODUCER_FENCED  # the zombie
    ctx.write_markers()
    ctx.store.flush()
    assert ctx.state() is S.COMPLETE_ABORT
    retry = ctx.init_reply("txn")
    ctx.store.flush()
    assert (retry.value.producer_id, retry.value.producer_epoch) == (producer_id, epoch + 2)
    assert ctx.events.of("txn.fenced")[0]["reason"] == "reinit"


def test_t14_a_failed_fence_does_not_bump_the_epoch_twice(ctx: TxnTestContext) -> None:
    _, epoch = ctx.begin("txn")
    ctx.store.fail_next(ErrorCode.KAFKA_STORAGE_ERROR)
    assert error(ctx.init("txn")) == ErrorCode.NOT_COORDINATOR
    txn = ctx.txn()
    assert (txn.state, txn.pending_state, txn.producer_epoch, txn.has_failed_epoch_fence) == (
        S.ONGOING,
        None,
        epoch + 1,
        True,
    )
    assert error(ctx.init("txn")) == ErrorCode.CONCURRENT_TRANSACTIONS
    assert ctx.txn().producer_epoch == epoch + 1
    assert ctx.sink.sent[-1].producer_epoch == epoch + 1


def test_t15_an_id_found_in_a_state_it_can_never_be_in_is_an_internal_error(ctx: TxnTestContext) -> None:
    ctx.init_ok("txn")
    ctx.txn().state = S.PREPARE_EPOCH_FENCE
    assert error(ctx.init("txn")) == ErrorCode.UNKNOWN_SERVER_ERROR
    assert ctx.events.of("txn.illegal_state")


def test_t3_not_coordinator_when_not_owned_and_load_in_progress_while_loading() -> None:
    ctx = TxnTestContext(partitions=[])
    partition = ctx.coordinator.partition_for("txn")
    assert error(ctx.init("txn")) == ErrorCode.NOT_COORDINATOR
    ctx.coordinator.begin_loading(partition)
    assert error(ctx.init("txn")) == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    ctx.coordinator.load_partition(partition, [], ctx.now_ms)
    assert ctx.init_ok("txn") == (1000, 0)


def test_a_producer_id_that_cannot_be_allocated_answers_the_allocators_error(ctx: TxnTestContext) -> None:
    ctx.producer_ids.fail_next(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
    assert error(ctx.init("txn")) == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    assert ctx.coordinator.transaction("txn") is None
    assert ctx.init_ok("txn") == (1000, 0)


@pytest.mark.parametrize(
    ("version", "expected"), [(3, ErrorCode.INVALID_PRODUCER_EPOCH), (4, ErrorCode.PRODUCER_FENCED)]
)
def test_t17_producer_fenced_is_invalid_producer_epoch_before_v4(
    ctx: TxnTestContext, version: int, expected: ErrorCode
) -> None:
    ctx.init_ok("txn")
    assert error(ctx.init("txn", producer_id=999, producer_epoch=0, version=version)) == expected
