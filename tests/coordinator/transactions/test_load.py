"""Loading `__transaction_state` (T3, T53-T55): replay, resumed markers, damaged records, unloading."""

from __future__ import annotations

from coordinator.transactions import DamagedTxnRecord, TxnRecord, decode_record, encode_record
from coordinator.transactions import TransactionState as S
from coordinator.transactions.records import tombstone
from protocol.errors import ErrorCode
from protocol.messages.transaction_log_value import TransactionLogValue
from tests.coordinator.transactions.harness import TxnTestContext


def test_t53_a_restart_restores_every_id_from_the_log() -> None:
    ctx = TxnTestContext()
    a = ctx.begin("a", {"orders": [0, 1]}, timeout_ms=45_000)
    b = ctx.init_ok("b")
    ctx.restart()
    txn = ctx.txn("a")
    assert (txn.producer_id, txn.producer_epoch, txn.state) == (*a, S.ONGOING)
    assert (txn.partitions, txn.timeout_ms, txn.last_producer_epoch) == ({("orders", 0), ("orders", 1)}, 45_000, -1)
    assert (ctx.txn("b").producer_id, ctx.txn("b").state) == (b[0], S.EMPTY)
    assert ctx.init_ok("b") == (b[0], b[1] + 1)


def test_t53_a_transaction_in_prepare_commit_completes_after_a_restart() -> None:
    ctx = TxnTestContext()
    producer_id, epoch = ctx.begin("txn", {"orders": [0]})
    assert ctx.end("txn", producer_id, epoch, commit=True) == ErrorCode.NONE
    ctx.restart(coordinator_epoch=3)  # the markers were never written
    [resumed] = ctx.sink.outstanding
    assert (resumed.committed, resumed.partitions, resumed.coordinator_epoch) == (True, (("orders", 0),), 3)
    assert ctx.txn().pending_state is S.COMPLETE_COMMIT
    assert ErrorCode(ctx.init("txn").error_code) == ErrorCode.CONCURRENT_TRANSACTIONS
    ctx.write_markers()
    assert ctx.state() is S.COMPLETE_COMMIT
    assert ctx.logged_states()[-1] == "CompleteCommit"


def test_t53_an_ongoing_transaction_is_aborted_at_its_timeout_after_a_restart() -> None:
    ctx = TxnTestContext(abort_timed_out_transactions_interval_ms=1_000)
    ctx.begin("txn", timeout_ms=5_000)
    ctx.restart()
    assert ctx.state() is S.ONGOING and ctx.sink.outstanding == []
    ctx.sleep(6_000)
    assert ctx.state() is S.PREPARE_ABORT
    ctx.write_markers()
    assert ctx.state() is S.COMPLETE_ABORT


def test_t53_t54_the_latest_value_wins_and_a_tombstone_forgets() -> None:
    ctx = TxnTestContext()
    partition = ctx.coordinator.partition_for("gone")
    ctx.init_ok("gone")
    ctx.store.append(partition, [TxnRecord("gone", None)], lambda _e: None)
    ctx.init_ok("kept")
    ctx.init_ok("kept")
    ctx.restart()
    assert ctx.coordinator.transaction("gone") is None
    assert ctx.txn("kept").producer_epoch == 1
    assert ctx.events.of("txn_log.partition_loaded")[0].keys() >= {"partition", "transactions", "records"}


def test_decision9_damaged_records_are_quarantined_and_reported_and_the_rest_loads() -> None:
    ctx = TxnTestContext(partitions=[])
    partition = ctx.coordinator.partition_for("txn")
    good = TxnRecord(
        "txn",
        TransactionLogValue(producer_id=7, producer_epoch=2, transaction_timeout_ms=60_000, transaction_status=0),
    )
    bad_state = TxnRecord(
        "txn",
        TransactionLogValue(producer_id=7, producer_epoch=3, transaction_timeout_ms=60_000, transaction_status=9),
    )
    garbage = decode_record(b"\x00\x00\x00\x03txn", b"\x00\x01\xff")
    unknown_key = decode_record(b"\x00\x05whatever", b"\x00\x01")
    assert isinstance(garbage, DamagedTxnRecord) and isinstance(unknown_key, DamagedTxnRecord)
    ctx.coordinator.begin_loading(partition)
    assert ctx.coordinator.load_partition(partition, [good, bad_state, garbage, unknown_key], ctx.now_ms)
    assert (ctx.txn().producer_id, ctx.txn().producer_epoch) == (7, 2)  # the last good value
    quarantined = ctx.coordinator.quarantined_records()[partition]
    assert [q.reason for q in quarantined] == [
        "unknown transaction state 9",
        garbage.reason,
        "unknown key version 5",
    ]
    assert len(ctx.events.of("txn_log.record_quarantined")) == 3


def test_decision9_a_value_stored_under_the_wrong_partition_is_quarantined() -> None:
    ctx = TxnTestContext(partitions=[])
    partition = ctx.coordinator.partition_for("txn")
    other = (partition + 1) % ctx.config.transaction_state_log_num_partitions
    record = TxnRecord("txn", TransactionLogValue(producer_id=7, producer_epoch=2, transaction_timeout_ms=1))
    ctx.coordinator.begin_loading(other)
    ctx.coordinator.load_partition(other, [record], ctx.now_ms)
    assert ctx.coordinator.quarantined_records()[other][0].reason == f"belongs to partition {partition}"


def test_t53_a_reader_that_fails_fails_that_partition_only() -> None:
    ctx = TxnTestContext(partitions=[0])

    def broken():  # type: ignore[no-untyped-def]
        yield from ()
        raise OSError("disk gone")

    ctx.coordinator.begin_loading(1)
    assert not ctx.coordinator.load_partition(1, broken(), ctx.now_ms)
    assert ctx.coordinator.load_failures() == {1: "OSError('disk gone')"}
    assert ctx.coordinator.owned_partitions() == {0: "active", 1: "failed"}


def test_t68_t3_loading_partitions_answer_load_in_progress() -> None:
    ctx = TxnTestContext(partitions=[])
    partition = ctx.coordinator.partition_for("txn")
    ctx.coordinator.begin_loading(partition)
    assert ctx.describe("txn")[0].error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    assert ctx.list().error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS


def test_t55_unloading_forgets_the_partitions_ids_and_fails_its_writes() -> None:
    ctx = TxnTestContext(auto_durable=False)
    reply = ctx.init_reply("txn")
    partition = ctx.coordinator.partition_for("txn")
    ctx.coordinator.unload_partition(partition, ctx.now_ms)
    assert ErrorCode(reply.value.error_code) == ErrorCode.NOT_COORDINATOR
    assert ctx.coordinator.transaction("txn") is None
    assert ErrorCode(ctx.init("txn").error_code) == ErrorCode.NOT_COORDINATOR


def test_shutdown_answers_coordinator_not_available() -> None:
    ctx = TxnTestContext()
    ctx.coordinator.shutdown(ctx.now_ms)
    assert ErrorCode(ctx.init("txn").error_code) == ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert ctx.list().error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert ctx.coordinator.next_deadline_ms() is None


def test_records_round_trip_through_the_broker_codec() -> None:
    value = TransactionLogValue(producer_id=7, producer_epoch=2, transaction_timeout_ms=60_000, transaction_status=1)
    for record in (TxnRecord("txn", value), tombstone("txn")):
        key, data = encode_record(record)
        assert decode_record(key, data) == record
    assert isinstance(decode_record(None, b"\x00\x01"), DamagedTxnRecord)


def test_t53_a_timed_out_abort_interrupted_by_a_crash_completes_after_the_restart() -> None:
    ctx = TxnTestContext()
    _, epoch = ctx.begin("txn", {"orders": [0], "audit": [1]})
    ctx.coordinator.abort_now("txn", ctx.now_ms)
    ctx.restart()
    [resumed] = ctx.sink.outstanding
    assert (resumed.committed, resumed.producer_epoch, resumed.partitions) == (
        False,
        epoch + 1,
        (("audit", 1), ("orders", 0)),
    )
    assert ctx.events.of("txn.markers_sent")[-1]["reason"] == "loaded"
    ctx.write_markers()
    assert ctx.state() is S.COMPLETE_ABORT


def test_t32_a_decided_transaction_that_cannot_complete_is_reported_not_retried_forever() -> None:
    ctx = TxnTestContext(partitions=[])
    partition = ctx.coordinator.partition_for("txn")
    broken = TxnRecord(  # PrepareCommit without a start time: Kafka's completion check refuses it
        "txn",
        TransactionLogValue(
            producer_id=7,
            producer_epoch=2,
            transaction_timeout_ms=60_000,
            transaction_status=S.PREPARE_COMMIT.value,
            transaction_start_timestamp_ms=-1,
        ),
    )
    ctx.coordinator.begin_loading(partition)
    ctx.coordinator.load_partition(partition, [broken], ctx.now_ms)
    ctx.write_markers()
    assert ctx.events.of("txn.illegal_state")
    assert ctx.coordinator.pending_markers() == [] and ctx.coordinator.next_deadline_ms() is not None
    assert ctx.sleep(1_000) == 0  # no retry timer: only the periodic scans remain, not yet due
