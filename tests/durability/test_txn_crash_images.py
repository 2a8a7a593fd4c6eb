"""A crash at each exact point between a transaction's decision and its completion, as crash images (issue #15).

The window a SIGKILL right after EndTxn hits only by chance (tests/durability/test_txn_kill9_steps.py): the
PrepareCommit/PrepareAbort record is durable (after EndTxn, or after the coordinator aborted the transaction at its
timeout with the producer's epoch bumped) and the markers reached none, some or all of the transaction's
partitions, with CompleteCommit/CompleteAbort not written. Here an in-process broker holds the marker round back
(`MarkerChannel.intercept`, the hook the toolkit's marker faults use, never calling it on), the test writes the
markers of some partitions itself exactly as the channel would (the data partitions' through `Broker.txn_markers`,
the group's `__consumer_offsets` partition through the group coordinator), and copies the log directory while the
broker's event loop is parked in the test: every write the broker made is in the files, nothing more, which is what
a SIGKILL at that instant leaves (no write is buffered in the process across loop turns; the cleaner is off).

A broker started on the copy must complete the transaction: markers for every partition (again where one was
written: a second marker for a transaction already closed there changes nothing), the group's pending offsets
materialised (commit) or dropped (abort), CompleteCommit/CompleteAbort; and the ledger's invariants hold before
and after (all or nothing per partition while completing, all or nothing across partitions once settled, offsets
exactly the committed transaction's).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from broker.app import Broker
from coordinator.transactions import TxnMarkers
from protocol.errors import ErrorCode
from tests.broker.conftest import broker_config
from tests.broker.txn_offsets_wire import complete_transaction
from tests.durability.offsets_client import connect
from tests.durability.txn_driver import run_transaction
from tests.durability.txn_ledger import Ledger
from tests.support.broker_process import wait_until_async, wait_until_awaited
from tests.support.txn_wire import TxnWire, describe

OUTPUT, INPUT = "txn-out", "txn-in"
OUTPUT_PARTITIONS, INPUT_PARTITIONS = [0, 1, 2], [0, 1]
TXN_ID = "crash-image"
SETTINGS = {"transaction_state_log_num_partitions": "3", "log_cleaner_enable": "false"}
#: Which partitions already have the transaction's marker in the image ("offsets": the group's partition).
CUTS = {
    "no-marker": (),
    "first-data-partition": (0,),
    "every-data-partition": (0, 1, 2),
    "offsets-partition-only": ("offsets",),
    "every-partition": (0, 1, 2, "offsets"),
}


async def _started(data: Path) -> Broker:
    broker = Broker(broker_config(data, **SETTINGS))
    await broker.start()
    await broker.loaded.wait()
    return broker


def _hold_markers(broker: Broker) -> list[TxnMarkers]:
    """The channel hands its rounds over here and never writes them (a crash before the markers)."""
    held: list[TxnMarkers] = []

    def intercept(markers: TxnMarkers, _go: Callable[[ErrorCode | None], None]) -> None:
        held.append(markers)

    broker.transactions.channel.intercept = intercept
    return held


async def _write_markers(broker: Broker, markers: TxnMarkers, cut: tuple[int | str, ...]) -> None:
    """The markers of the cut's partitions, as the channel writes them."""
    for partition in cut:
        if partition == "offsets":
            error = await complete_transaction(
                broker,
                Ledger.group(TXN_ID),
                markers.producer_id,
                markers.committed,
                producer_epoch=markers.producer_epoch,
            )
        else:
            assert isinstance(partition, int)
            error = broker.txn_markers.write(
                OUTPUT,
                partition,
                producer_id=markers.producer_id,
                producer_epoch=markers.producer_epoch,
                coordinator_epoch=markers.coordinator_epoch,
                commit=markers.committed,
            )
        assert error == ErrorCode.NONE, (partition, error)


async def _decide(broker: Broker, producer: TxnWire, ledger: Ledger, decision: str) -> None:
    """The second transaction is decided: by its producer's EndTxn (answered), or by the coordinator aborting it as
    its timeout does (fenced: epoch + 1)."""
    if decision != "timeout":
        await run_transaction(producer, ledger, OUTPUT_PARTITIONS, commit=decision == "commit")
        return
    await run_transaction(producer, ledger, OUTPUT_PARTITIONS, stop_after="commit_offsets")
    clock = broker.clock
    assert broker.transactions.coordinator.abort_now(TXN_ID, clock.monotonic_ms(), clock.wall_ms())
    broker.rearm_timers()


async def _crash_image(
    tmp_path: Path, ledger: Ledger, cut: tuple[int | str, ...], decision: str, transaction_version: int = 0
) -> Path:
    """A broker where TXN_ID committed a baseline transaction and decided a second one, with the cut's markers
    written; returns the copy of its log directory taken right then. The producer runs `transaction_version`'s
    requests."""
    broker = await _started(tmp_path / "live")
    try:
        client = await connect(broker.ports[0])
        await ledger.create_topics(client)
        producer = TxnWire(client, TXN_ID, 60_000, transaction_version=transaction_version)
        assert await producer.init() == ErrorCode.NONE
        await run_transaction(producer, ledger, OUTPUT_PARTITIONS)
        await wait_until_awaited(lambda: ledger.settled(client), what="the baseline transaction to complete")
        held = _hold_markers(broker)
        await _decide(broker, producer, ledger, decision)
        await wait_until_async(lambda: held, what="the decision to be durable and its markers handed over")
        [markers] = held
        assert markers.committed is (decision == "commit")
        await _write_markers(broker, markers, cut)
        image = tmp_path / "image"
        shutil.copytree(tmp_path / "live" / "data", image / "data")
        await client.close()
        return image
    finally:
        await broker.stop()


@pytest.mark.parametrize("decision", ["commit", "abort", "timeout"])
@pytest.mark.parametrize("cut", list(CUTS))
async def test_a_transaction_decided_before_the_crash_completes_after_the_restart(
    tmp_path: Path, cut: str, decision: str
) -> None:
    ledger = Ledger(OUTPUT, OUTPUT_PARTITIONS, INPUT, INPUT_PARTITIONS)
    image = await _crash_image(tmp_path, ledger, CUTS[cut], decision)
    broker = await _started(image)
    try:
        client = await connect(broker.ports[0])
        await ledger.check_unsettled(client, f"{cut}: completing")
        await wait_until_awaited(lambda: ledger.settled(client), what="the decided transaction to complete")
        await ledger.check_settled(client, f"{cut}: completed")
        described = await describe(client, TXN_ID)
        assert described.state == ("CompleteCommit" if decision == "commit" else "CompleteAbort")
        assert described.producer_epoch == (1 if decision == "timeout" else 0)  # the timeout fenced the producer
        assert not broker.transactions.coordinator.pending_markers()
        await client.close()
    finally:
        await broker.stop()


@pytest.mark.parametrize("decision", ["commit", "abort", "timeout"])
async def test_a_version_2_transaction_decided_before_the_crash_completes_after_the_restart(
    tmp_path: Path, decision: str
) -> None:
    """T71, T75, T77: under transaction version 2 the PrepareCommit/PrepareAbort on disk carries the bumped epoch
    (the baseline transaction's EndTxn v5 bumped it once already) and so do the markers, one of which is in the
    image; the restarted broker resends the others at that epoch and completes the transaction."""
    ledger = Ledger(OUTPUT, OUTPUT_PARTITIONS, INPUT, INPUT_PARTITIONS)
    image = await _crash_image(tmp_path, ledger, CUTS["first-data-partition"], decision, transaction_version=2)
    broker = await _started(image)
    try:
        client = await connect(broker.ports[0])
        await ledger.check_unsettled(client, "version 2: completing")
        await wait_until_awaited(lambda: ledger.settled(client), what="the decided transaction to complete")
        await ledger.check_settled(client, "version 2: completed")
        described = await describe(client, TXN_ID)
        assert described.state == ("CompleteCommit" if decision == "commit" else "CompleteAbort")
        assert described.producer_epoch == 2  # init 0, the baseline's EndTxn v5 1, this decision 2
        assert not broker.transactions.coordinator.pending_markers()
        await client.close()
    finally:
        await broker.stop()
