"""Transactional offsets survive a restart exactly, and compaction of `__consumer_offsets` does not change them
(T44, T62-T66).

One group gets, over the wire, a committed transaction, an aborted one over an older committed offset, one still
open, and a committed one whose partition got a plain commit after it (the later write wins). The markers are
written through `GroupCoordinator.complete_transaction` (what WriteTxnMarkers calls). After a restart OffsetFetch
answers exactly the same (the open transaction still unstable for require_stable), its marker completes it, and a
second restart keeps that. Compacting the partition (small segments, a cleaner pass) between restarts keeps the
answers: an aborted offset must not hide the committed one before it, an open one must not be lost.
"""

from __future__ import annotations

from pathlib import Path

from broker.app import Broker
from broker.offsets_log import OFFSETS_TOPIC
from protocol.errors import ErrorCode
from protocol.registry import ApiKey
from storage.cleaner import clean
from tests.broker.conftest import UNVERIFIED_TRANSACTIONS, broker_config
from tests.broker.txn_offsets_wire import complete_transaction, fetch_v7, txn_commit_request
from tests.broker.wire import WireClient
from tests.durability.offsets_client import commit, connect, create_topic

GROUP = "eos-group"
TOPIC = "eos-input"
PARTITIONS = [0, 1, 2, 3]
UNSTABLE = ErrorCode.UNSTABLE_OFFSET_COMMIT
#: (offset, error) per partition a read_committed consumer sees before the open transaction (producer 3) ends.
EXPECTED = {0: (10, 0), 1: (1, 0), 2: (-1, UNSTABLE), 3: (41, 0)}
#: ... and what OffsetFetch answers without require_stable.
COMMITTED = {0: 10, 1: 1, 2: 1, 3: 41}


async def _start(data: Path, **settings: str) -> Broker:
    """The producers here are not a transaction coordinator's (their markers are written by hand), so the broker
    does not ask it about them (`transaction.partition.verification.enable=false`)."""
    settings = {**UNVERIFIED_TRANSACTIONS, **settings}
    broker = Broker(broker_config(data, log_cleaner_enable="false", **settings))
    await broker.start()
    await broker.loaded.wait()
    return broker


async def _txn_commit(client: WireClient, producer_id: int, offsets: dict[int, int]) -> None:
    request = txn_commit_request(GROUP, TOPIC, offsets, producer_id=producer_id)
    response = await client.call(ApiKey.TXN_OFFSET_COMMIT, 3, request)
    assert {p.error_code for t in response.topics for p in t.partitions} == {ErrorCode.NONE}


async def _complete(broker: Broker, producer_id: int, commit_it: bool) -> None:
    assert await complete_transaction(broker, GROUP, producer_id, commit_it) == ErrorCode.NONE


async def _assert_answers(broker: Broker, stable: dict[int, tuple[int, int]], committed: dict[int, int]) -> None:
    client = await connect(broker.ports[0])
    assert await fetch_v7(client, GROUP, TOPIC, PARTITIONS, require_stable=True) == stable
    answered = await fetch_v7(client, GROUP, TOPIC, PARTITIONS, require_stable=False)
    assert {p: o for p, (o, _) in answered.items()} == committed
    await client.close()


async def _write_transactions(broker: Broker) -> None:
    client = await connect(broker.ports[0])
    await create_topic(client, TOPIC, len(PARTITIONS))
    assert await commit(client, GROUP, TOPIC, dict.fromkeys(PARTITIONS, 1))
    await _txn_commit(client, 1, {0: 10})
    await _complete(broker, 1, commit_it=True)
    await _txn_commit(client, 2, {1: 20})
    await _complete(broker, 2, commit_it=False)
    await _txn_commit(client, 3, {2: 30})  # stays open
    await _txn_commit(client, 4, {3: 40})
    assert await commit(client, GROUP, TOPIC, {3: 41})  # written after producer 4's offset: wins at its COMMIT
    await _complete(broker, 4, commit_it=True)
    await client.close()


def _compact(broker: Broker) -> None:
    partition_log = broker.logs.get(OFFSETS_TOPIC, broker.coordinator.partition_for(GROUP))
    assert partition_log is not None
    partition_log.roll()
    result = clean(partition_log, broker.clock.wall_ms())
    assert result.aborted is None
    assert result.stats.bytes_written < result.stats.bytes_read  # the pass really removed something


async def test_t66_pending_and_committed_transactional_offsets_survive_restarts(tmp_path: Path) -> None:
    broker = await _start(tmp_path)
    try:
        await _write_transactions(broker)
        await _assert_answers(broker, EXPECTED, COMMITTED)
    finally:
        await broker.stop()

    broker = await _start(tmp_path)
    try:
        await _assert_answers(broker, EXPECTED, COMMITTED)
        await _complete(broker, 3, commit_it=True)  # the open transaction's marker, after the restart
        await _assert_answers(broker, {**EXPECTED, 2: (30, 0)}, {**COMMITTED, 2: 30})
    finally:
        await broker.stop()

    broker = await _start(tmp_path)
    try:
        await _assert_answers(broker, {**EXPECTED, 2: (30, 0)}, {**COMMITTED, 2: 30})
    finally:
        await broker.stop()


async def test_t44_compaction_keeps_transactional_offsets_exact_across_restarts(tmp_path: Path) -> None:
    small = {"offsets_topic_segment_bytes": "512"}
    broker = await _start(tmp_path, **small)
    try:
        await _write_transactions(broker)
        _compact(broker)
        await _assert_answers(broker, EXPECTED, COMMITTED)
    finally:
        await broker.stop()

    broker = await _start(tmp_path, **small)
    try:
        await _assert_answers(broker, EXPECTED, COMMITTED)
        await _complete(broker, 3, commit_it=False)  # the open transaction aborts: its offset was kept, now goes
        _compact(broker)
        await _assert_answers(broker, {**EXPECTED, 2: (1, 0)}, COMMITTED)
    finally:
        await broker.stop()

    broker = await _start(tmp_path, **small)
    try:
        await _assert_answers(broker, {**EXPECTED, 2: (1, 0)}, COMMITTED)
    finally:
        await broker.stop()
