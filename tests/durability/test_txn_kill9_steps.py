"""kill -9 of the broker process with a consume-transform-produce transaction stopped at every step (issue #15).

One transactional id per step, each with its own group: every id first commits a baseline transaction (records in
the output topic, offsets for its group), then runs a second one that stops right after one step, over raw
requests (tests/support/txn_wire.py) so the step the broker answered is exact:

* Ongoing: after AddPartitionsToTxn, after the first of three Produces, after every Produce, after
  AddOffsetsToTxn, after TxnOffsetCommit;
* decided and written: EndTxn(commit) / EndTxn(abort) answered and the transaction CompleteCommit/CompleteAbort;
* decided, markers in flight: EndTxn(commit) and EndTxn(abort) sent together, the broker SIGKILLed the moment both
  answers arrived: PrepareCommit/PrepareAbort is durable, the markers (written on the loop turn after the answer)
  reached none, some or all of the partitions and CompleteCommit/Abort may or may not be written; the test holds
  for each outcome (tests/durability/test_txn_crash_images.py stops at each of them exactly).

Then two restarts, each after a SIGKILL:

1. with the timeout-abort scan held off (`transaction.abort.timed.out.transaction.cleanup.interval.ms` of an
   hour), so the Ongoing transactions stay Ongoing however slow the machine: the decided ones complete (their
   markers are resent from the PrepareCommit/PrepareAbort found at load), read_committed sees nothing of an
   Ongoing transaction and all or nothing of a decided one, require_stable answers UNSTABLE_OFFSET_COMMIT for the
   open TxnOffsetCommit and nothing else;
2. with the scan every 100 ms: the Ongoing transactions abort at their timeout (the coordinator logs
   `txn.timed_out`, bumps the epoch), nothing is left open, and the settled invariants hold (the ledger's
   docstring): all-or-nothing per transaction, every answered commit visible, offsets exactly the latest
   committed transaction's. The old producers (alive all along: only the broker died) go on: the in-flight
   EndTxn sent again is answered NONE, an Ongoing transaction is refused (fenced at its timeout) and stays
   invisible. A new producer of every id then commits one more transaction.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from protocol.errors import ErrorCode
from tests.broker.wire import WireClient
from tests.durability.offsets_client import connect
from tests.durability.txn_driver import TxnFailed, advance, run_transaction
from tests.durability.txn_ledger import Ledger
from tests.support.broker_process import BrokerProcess, wait_until_awaited
from tests.support.txn_wire import TxnWire, describe, offsets

OUTPUT, INPUT = "txn-out", "txn-in"
OUTPUT_PARTITIONS, INPUT_PARTITIONS = [0, 1, 2], [0, 1]
TIMEOUT_MS = 2000
SCANNING = {
    "transaction.state.log.num.partitions": "3",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "100",
}
HELD = {**SCANNING, "transaction.abort.timed.out.transaction.cleanup.interval.ms": "3600000"}
ONGOING = {
    "at-add-partitions": "add_partitions",
    "at-first-produce": "first_produce",
    "at-produce": "produce",
    "at-add-offsets": "add_offsets",
    "at-offset-commit": "commit_offsets",
}
COMPLETED = {"completed-commit": True, "completed-abort": False}
IN_FLIGHT = {"in-flight-commit": True, "in-flight-abort": False}
SETTLE_S = 30.0


async def _producer(port: int, transactional_id: str) -> TxnWire:
    producer = TxnWire(await connect(port), transactional_id, TIMEOUT_MS)
    assert await producer.init() == ErrorCode.NONE
    return producer


async def _park_every_step(broker: BrokerProcess, ledger: Ledger) -> dict[str, TxnWire]:
    """Baseline and parked transactions of every id; the broker is SIGKILLed once both in-flight EndTxns answered.
    Returns each id's producer (disconnected)."""
    producers = {}
    for transactional_id in [*ONGOING, *COMPLETED, *IN_FLIGHT]:
        producer = await _producer(broker.port, transactional_id)
        await run_transaction(producer, ledger, OUTPUT_PARTITIONS)
        producers[transactional_id] = producer
    for transactional_id, commit in COMPLETED.items():
        await run_transaction(producers[transactional_id], ledger, OUTPUT_PARTITIONS, commit=commit)
    for transactional_id, step in ONGOING.items():
        await run_transaction(producers[transactional_id], ledger, OUTPUT_PARTITIONS, stop_after=step)
    in_flight = {
        t: await run_transaction(producers[t], ledger, OUTPUT_PARTITIONS, commit=c, stop_after="commit_offsets")
        for t, c in IN_FLIGHT.items()
    }
    await _wait_states(producers[next(iter(COMPLETED))].client, {t: _complete(c) for t, c in COMPLETED.items()})
    await asyncio.gather(*(advance(producers[t], txn, ledger) for t, txn in in_flight.items()))
    broker.kill()
    for producer in producers.values():
        producer.client.writer.close()
    return producers


def _complete(commit: bool) -> str:
    return "CompleteCommit" if commit else "CompleteAbort"


async def _wait_states(client: WireClient, states: dict[str, str]) -> None:
    seen: dict[str, str] = {}

    async def reached() -> bool:
        for transactional_id in states:
            seen[transactional_id] = (await describe(client, transactional_id)).state
        return seen == states

    await wait_until_awaited(reached, SETTLE_S, what=f"transactions in {states}", detail=lambda: f"seen {seen}")


def _timed_out_ids(broker: BrokerProcess) -> set[str]:
    """The transactional ids the coordinator aborted at their timeout (its `txn.timed_out` events)."""
    found = set()
    for line in broker.log_lines():
        if '"txn.timed_out"' in line:
            found.add(json.loads(line)["transactional_id"])
    return found


async def _check_held(broker: BrokerProcess, ledger: Ledger, producers: dict[str, TxnWire]) -> None:
    """Restart 1, the timeout scan held off: decided transactions complete, Ongoing ones stay open."""
    client = await connect(broker.port)
    await ledger.check_unsettled(client, "restarted, decided transactions completing")
    decided = {t: _complete(c) for t, c in {**COMPLETED, **IN_FLIGHT}.items()}
    await _wait_states(client, {**decided, **dict.fromkeys(ONGOING, "Ongoing")})
    await ledger.check_unsettled(client, "restarted, decided transactions complete")
    for transactional_id in ONGOING:
        assert (await describe(client, transactional_id)).producer_epoch == producers[transactional_id].epoch
    open_offsets = await offsets(client, ledger.group("at-offset-commit"), INPUT, INPUT_PARTITIONS, require_stable=True)
    assert {p: e for p, (_, e) in open_offsets.items()} == dict.fromkeys(
        INPUT_PARTITIONS, ErrorCode.UNSTABLE_OFFSET_COMMIT
    )
    views = await ledger.views(client)
    assert all(view.last_stable_offset < view.high_watermark for view in views.values()), "Ongoing data holds the LSO"
    await client.close()


async def _check_settled(broker: BrokerProcess, ledger: Ledger, producers: dict[str, TxnWire]) -> None:
    """Restart 2, the scan every 100 ms: the Ongoing transactions abort at their timeout and nothing stays open."""
    client = await connect(broker.port)
    await ledger.check_unsettled(client, "restarted again, Ongoing transactions timing out")
    await wait_until_awaited(lambda: ledger.settled(client), SETTLE_S, what="every transaction to settle")
    await ledger.check_settled(client, "settled")
    assert set(ONGOING) <= _timed_out_ids(broker)
    for transactional_id in ONGOING:
        described = await describe(client, transactional_id)
        assert (described.state, described.producer_epoch) == ("CompleteAbort", producers[transactional_id].epoch + 1)
    await client.close()


async def _producers_come_back(broker: BrokerProcess, ledger: Ledger, producers: dict[str, TxnWire]) -> None:
    """The producers lived on through the crashes (only the broker died) and go on with their transactions: an
    in-flight EndTxn sent again is answered NONE (the outcome was decided), an Ongoing transaction aborted at its
    timeout is refused (its producer was fenced), and nothing of it becomes visible."""
    for transactional_id, producer in producers.items():
        producer.client = await connect(broker.port)
        txn = ledger.last(transactional_id)
        assert txn is not None
        if transactional_id in IN_FLIGHT:
            txn.end_answer = None  # a client whose answer was lost sends it again
            await advance(producer, txn, ledger)
            assert txn.end_answer == ErrorCode.NONE
        elif transactional_id in ONGOING:
            with pytest.raises(TxnFailed) as refused:
                await advance(producer, txn, ledger)
            assert refused.value.error in (ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.PRODUCER_FENCED)
        await producer.client.close()
    client = await connect(broker.port)
    await ledger.check_settled(client, "after the old producers came back")
    await client.close()


async def test_kill9_at_every_step_of_a_transaction_then_restart(tmp_path: Path) -> None:
    ledger = Ledger(OUTPUT, OUTPUT_PARTITIONS, INPUT, INPUT_PARTITIONS)
    broker = BrokerProcess(tmp_path / "data", HELD)
    try:
        broker.start()
        client = await connect(broker.port)
        await ledger.create_topics(client)
        await client.close()
        producers = await _park_every_step(broker, ledger)

        broker.start()
        await _check_held(broker, ledger, producers)
        broker.kill()

        broker.overrides.update(SCANNING)
        broker.start()
        await _check_settled(broker, ledger, producers)
        await _producers_come_back(broker, ledger, producers)

        for transactional_id in producers:  # the pipelines come back and go on
            producer = await _producer(broker.port, transactional_id)
            await run_transaction(producer, ledger, OUTPUT_PARTITIONS)
            await producer.client.close()
        client = await connect(broker.port)
        await ledger.check_settled(client, "after one more transaction per id")
        await client.close()
    finally:
        broker.kill()
