"""Timers on the injected clock: aborting timed-out transactions (T46, T47) and expiring idle ids (T48)."""

from __future__ import annotations

from coordinator.transactions import TransactionState as S
from protocol.errors import ErrorCode
from tests.coordinator.transactions.harness import TxnTestContext


def test_t46_t47_a_transaction_past_its_timeout_is_aborted_with_an_epoch_bump_at_the_next_scan() -> None:
    ctx = TxnTestContext(abort_timed_out_transactions_interval_ms=1_000)
    producer_id, epoch = ctx.begin("txn", {"orders": [0]}, timeout_ms=2_500)
    ctx.sleep(2_000)  # the scans at 1000 and 2000 find it within its timeout
    assert ctx.state() is S.ONGOING
    ctx.sleep(999)  # 2999: timed out (start + 2500 < now) but the next scan is at 3000
    assert ctx.state() is S.ONGOING
    ctx.sleep(1)
    assert ctx.state() is S.PREPARE_ABORT
    [markers] = ctx.sink.sent
    assert (markers.committed, markers.producer_epoch) == (False, epoch + 1)
    ctx.write_markers()
    assert (ctx.state(), ctx.txn().producer_epoch) == (S.COMPLETE_ABORT, epoch + 1)
    assert ctx.events.of("txn.timed_out")[0]["transactional_id"] == "txn"
    # The timed-out producer is fenced: its epoch is stale (T47).
    assert ctx.end("txn", producer_id, epoch, commit=True) == ErrorCode.PRODUCER_FENCED
    assert set(ctx.add_partitions("txn", producer_id, epoch, {"orders": [1]}).values()) == {ErrorCode.PRODUCER_FENCED}


def test_t46_the_timeout_is_strict() -> None:
    ctx = TxnTestContext(abort_timed_out_transactions_interval_ms=1_000)
    ctx.begin("txn", timeout_ms=1_000)
    ctx.sleep(1_000)  # start + timeout == now: not yet
    assert ctx.state() is S.ONGOING
    ctx.sleep(1_000)
    assert ctx.state() is S.PREPARE_ABORT


def test_t46_only_ongoing_transactions_time_out() -> None:
    ctx = TxnTestContext(abort_timed_out_transactions_interval_ms=1_000)
    producer_id, epoch = ctx.begin("committing", timeout_ms=1_000)
    ctx.end("committing", producer_id, epoch, commit=True)
    ctx.init_ok("idle", timeout_ms=1_000)
    ctx.sleep(5_000)
    assert (ctx.state("committing"), ctx.state("idle")) == (S.PREPARE_COMMIT, S.EMPTY)
    assert len(ctx.sink.sent) == 1  # only the commit's markers


def test_t46_a_transaction_with_a_pending_write_is_skipped_until_the_write_is_done() -> None:
    ctx = TxnTestContext(abort_timed_out_transactions_interval_ms=1_000, auto_durable=False)
    reply = ctx.init_reply("txn", 500)
    ctx.store.flush()
    producer_id, epoch = reply.value.producer_id, reply.value.producer_epoch
    ctx.add_partitions_reply("txn", producer_id, epoch, {"orders": [0]})
    ctx.store.flush()
    ctx.end_reply("txn", producer_id, epoch, True)  # PrepareCommit written but not yet durable
    ctx.sleep(1_000)
    assert ctx.txn().pending_state is S.PREPARE_COMMIT
    ctx.store.flush()
    assert ctx.state() is S.PREPARE_COMMIT and ctx.sink.sent[0].committed


def test_t48_an_idle_id_expires_with_a_tombstone() -> None:
    ctx = TxnTestContext(transactional_id_expiration_ms=10_000, remove_expired_transactional_ids_interval_ms=1_000)
    producer_id, epoch = ctx.begin("txn")
    ctx.end("txn", producer_id, epoch, commit=True)
    ctx.write_markers()
    ctx.sleep(10_000)  # last update + expiration == now: expires (<=)
    assert ctx.coordinator.transaction("txn") is None
    assert ctx.log()[-1] is None
    partition = ctx.coordinator.partition_for("txn")
    assert ctx.events.of("txn.expired") == [
        {"transactional_id": "txn", "producer_id": producer_id, "partition": partition}
    ]
    assert ctx.describe("txn")[0].error_code == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
    assert ctx.init_ok("txn") == (producer_id + 1, 0)  # a brand-new producer id


def test_t48_open_transactions_never_expire() -> None:
    ctx = TxnTestContext(
        transactional_id_expiration_ms=1_000,
        remove_expired_transactional_ids_interval_ms=1_000,
        abort_timed_out_transactions_interval_ms=3_600_000,
    )
    ctx.begin("txn", timeout_ms=900_000)
    ctx.sleep(60_000)
    assert ctx.state() is S.ONGOING


def test_t48_a_failed_tombstone_keeps_the_id() -> None:
    ctx = TxnTestContext(transactional_id_expiration_ms=1_000, remove_expired_transactional_ids_interval_ms=1_000)
    ctx.init_ok("txn")
    ctx.store.fail_next(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    ctx.sleep(1_000)
    assert (ctx.state(), ctx.txn().pending_state) == (S.EMPTY, None)
    ctx.sleep(1_000)
    assert ctx.coordinator.transaction("txn") is None


def test_t48_while_the_tombstone_is_written_the_id_is_busy() -> None:
    ctx = TxnTestContext(
        transactional_id_expiration_ms=1_000, remove_expired_transactional_ids_interval_ms=1_000, auto_durable=False
    )
    reply = ctx.init_reply("txn")
    ctx.store.flush()
    ctx.sleep(1_000)
    assert ctx.txn().pending_state is S.DEAD
    assert ErrorCode(ctx.init("txn").error_code) == ErrorCode.CONCURRENT_TRANSACTIONS
    assert reply.value.producer_epoch == 0
    ctx.store.flush()
    assert ctx.coordinator.transaction("txn") is None


def test_scans_stop_when_nothing_is_owned_and_restart_with_a_load() -> None:
    ctx = TxnTestContext(partitions=[0])
    assert ctx.coordinator.next_deadline_ms() is not None
    ctx.coordinator.unload_partition(0, ctx.now_ms)
    assert ctx.coordinator.next_deadline_ms() is None
    ctx.coordinator.begin_loading(0)
    ctx.coordinator.load_partition(0, [], ctx.now_ms)
    assert ctx.coordinator.next_deadline_ms() == ctx.now_ms + ctx.config.abort_timed_out_transactions_interval_ms


def test_t47_the_toolkit_can_expire_a_transaction_now() -> None:
    ctx = TxnTestContext()
    producer_id, epoch = ctx.begin("txn", timeout_ms=900_000)
    assert ctx.coordinator.abort_now("txn", ctx.now_ms)
    assert ctx.state() is S.PREPARE_ABORT and ctx.sink.sent[-1].producer_epoch == epoch + 1
    assert not ctx.coordinator.abort_now("txn", ctx.now_ms)  # nothing Ongoing any more
    assert not ctx.coordinator.abort_now("nobody", ctx.now_ms)
    ctx.write_markers()
    assert ctx.end("txn", producer_id, epoch, commit=True) == ErrorCode.PRODUCER_FENCED
