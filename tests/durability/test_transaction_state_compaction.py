"""Compaction works for `__transaction_state` (issue #15): a compacted log loads into the same transactions.

Every transition rewrites a transactional id's whole metadata under its key, so the log cleaner may keep only the
latest value per id, and an expired id's tombstone removes it once the delete horizon has passed. A real
transaction coordinator writes, through the broker's own TransactionStateLog, the history of three ids: one with
several committed transactions, one with a transaction still open, one that expires. The cleaner then compacts the
partition twice (tombstones kept, then past `log.cleaner.delete.retention.ms`), and a coordinator loading each
version must hold exactly the transactions it holds from the uncompacted log.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from broker.transaction_state_log import TRANSACTION_STATE_TOPIC, TransactionStateLog
from coordinator.transactions import DamagedTxnRecord, TransactionState, TxnRecord
from protocol.errors import ErrorCode
from storage.cleaner import CleanerConfig, clean
from storage.log_manager import LogManager
from storage.partition_log import PartitionLog
from tests.coordinator.transactions.harness import TxnTestContext

WALL_MS = 1_000
EXPIRATION_MS = 60_000
RETENTION_MS = 86_400_000  # log.cleaner.delete.retention.ms's default


class TxnLogStore(TransactionStateLog):
    """The broker's TransactionStateLog over a real log, each append written at once (what one loop turn with
    nothing else queued does), usable as the transaction harness's store."""

    def __init__(self, directory: Path) -> None:
        self.manager = LogManager([directory], node_id=1, now_ms=0)
        self.manager.create_topic(TRANSACTION_STATE_TOPIC, 1, {"cleanup.policy": "compact"})
        super().__init__(self.manager, lambda: WALL_MS, lambda flush: flush(), self._deliver)

    @staticmethod
    def _deliver(outcomes: list[tuple[Callable[[ErrorCode], None], ErrorCode]]) -> None:
        for callback, error in outcomes:
            callback(error)

    def records(self, partition: int) -> list[TxnRecord | DamagedTxnRecord]:
        return self.read_transactions(partition)

    def partition_log(self) -> PartitionLog:
        partition_log = self.manager.get(TRANSACTION_STATE_TOPIC, 0)
        assert partition_log is not None
        return partition_log


def _history(store: TxnLogStore) -> TxnTestContext:
    ctx = TxnTestContext(
        store=store,  # type: ignore[arg-type]
        transaction_state_log_num_partitions=1,
        transactional_id_expiration_ms=EXPIRATION_MS,
        remove_expired_transactional_ids_interval_ms=1_000,
    )
    ctx.init_ok("expiring")
    ctx.sleep(EXPIRATION_MS + 2_000)  # idle past transactional.id.expiration.ms: tombstoned
    assert ctx.state("expiring") is None
    for _ in range(3):
        producer_id, epoch = ctx.begin("committing", {"orders": [0, 1]})
        assert ctx.end("committing", producer_id, epoch, True) == ErrorCode.NONE
        ctx.write_markers()
    ctx.begin("open", {"orders": [2]})
    return ctx


def _snapshot(ctx: TxnTestContext) -> dict[str, tuple[object, ...]]:
    return {
        tid: (m.producer_id, m.producer_epoch, m.state, tuple(sorted(m.partitions)), m.timeout_ms)
        for tid in ("committing", "open", "expiring")
        if (m := ctx.coordinator.transaction(tid)) is not None
    }


def test_a_compacted_transaction_state_log_loads_into_the_same_transactions(tmp_path: Path) -> None:
    store = TxnLogStore(tmp_path)
    ctx = _history(store)
    before = _snapshot(ctx)
    assert set(before) == {"committing", "open"}
    assert before["committing"][2] is TransactionState.COMPLETE_COMMIT
    assert before["open"][2] is TransactionState.ONGOING
    written = len(store.records(0))
    store.partition_log().roll(now_ms=WALL_MS)  # the active segment is never cleaned: close it

    config = CleanerConfig(delete_retention_ms=RETENTION_MS)
    kept = clean(store.partition_log(), WALL_MS, config=config)
    assert kept.next_delete_horizon_ms is not None  # the expired id's tombstone is still there
    compacted = store.records(0)
    assert len(compacted) < written
    assert [r.transactional_id for r in compacted if isinstance(r, TxnRecord) and r.is_tombstone] == ["expiring"]
    ctx.restart()
    assert _snapshot(ctx) == before

    clean(store.partition_log(), WALL_MS + RETENTION_MS + 1, config=config)  # past the tombstone's delete horizon
    final = store.records(0)
    assert sorted(r.transactional_id for r in final if isinstance(r, TxnRecord)) == ["committing", "open"]
    ctx.restart()
    assert _snapshot(ctx) == before
    store.manager.close()
