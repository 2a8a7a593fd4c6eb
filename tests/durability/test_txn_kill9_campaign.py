"""kill -9 of the broker process at seeded random moments during a stream of transactions (issue #15).

Each seed runs a broker with small `__transaction_state` and `__consumer_offsets` segments and an eager cleaner
(rolls and compaction passes happen all along), and ROUNDS rounds of: two transactional ids (one group each) run
consume-transform-produce transactions back to back over raw requests (tests/support/txn_wire.py): 2 or 3 output
partitions, 1-3 records per partition, TxnOffsetCommit for the group, then EndTxn, a quarter of them aborts. The
broker is SIGKILLed, chosen by the seed, either after a random delay or the moment a client gets the answer to a
given step (Produce, TxnOffsetCommit, EndTxn), which lands kills inside the Ongoing and the PrepareCommit/
PrepareAbort windows. Then it restarts (in some rounds it is SIGKILLed again soon after, while it loads, resends
markers and aborts what timed out, and restarts again). The producers live on (only the broker died) and, chosen
by the seed, leave their open transactions to abort at their timeout, or come back at once and initialise again
(InitProducerId fences and aborts them), or come back and go on with their transaction where they were (an
unanswered Produce or EndTxn sent again, as clients retry them: it commits unless it timed out meanwhile). After
the restart and once nothing is left open, the ledger's invariants (tests/durability/txn_ledger.py) hold:

* read_committed never sees a record of a transaction whose commit was never asked, nor a partial transaction
  (all or nothing per partition at any moment, across partitions once settled), and no transaction stays open;
* every transaction the client saw committed (EndTxn answered NONE) is visible, nothing aborted is;
* each group's committed offsets are exactly those of its latest committed transaction, never half-committed;
  require_stable answers UNSTABLE_OFFSET_COMMIT while that transaction is Ongoing and never once it is settled.

The default run (`make test`) takes CAMPAIGN_SEEDS=2 seeds of 2 rounds (about 10 s on 2 cores); `make campaigns`
(CAMPAIGN=1) 20 seeds of 4 rounds. tests/durability/test_txn_kill9_steps.py kills at each step deterministically.
"""

from __future__ import annotations

import asyncio
import os
import random
from dataclasses import dataclass
from pathlib import Path

import pytest

from protocol.errors import ErrorCode
from tests.durability.offsets_client import connect
from tests.durability.txn_driver import NotSent, TxnFailed, advance, run_transaction
from tests.durability.txn_ledger import Ledger
from tests.support.broker_process import BrokerProcess, wait_until_awaited
from tests.support.campaign import FULL
from tests.support.txn_wire import TxnWire

SEEDS = int(os.environ.get("CAMPAIGN_SEEDS", "20" if FULL else "2"))
ROUNDS = 4 if FULL else 2
IDS = ["pipeline-a", "pipeline-b"]
OUTPUT, INPUT = "txn-out", "txn-in"
OUTPUT_PARTITIONS, INPUT_PARTITIONS = [0, 1, 2], [0, 1]
TIMEOUT_MS = 1500
SETTLE_S = 30.0
BROKER = {
    "transaction.state.log.num.partitions": "3",
    "transaction.state.log.segment.bytes": "4096",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "100",
    "offsets.topic.num.partitions": "3",
    "offsets.topic.segment.bytes": "4096",
    "log.cleaner.backoff.ms": "10",
    "log.cleaner.min.cleanable.ratio": "0.01",
}
KILL_STEPS = ("produce", "commit_offsets", "end")
DISCONNECTED = (ConnectionError, asyncio.IncompleteReadError, OSError)


@dataclass
class KillPlan:
    """When this round's SIGKILL lands: after `delay_s`, or (with `step`) at the first answer to that step after
    `delay_s`."""

    delay_s: float
    step: str | None

    @classmethod
    def draw(cls, rng: random.Random) -> KillPlan:
        return cls(rng.uniform(0.05, 1.0), rng.choice([None, *KILL_STEPS]))


class KillingProducer(TxnWire):
    """A producer that SIGKILLs the broker as soon as it got the answer the round's plan waits for, and knows that
    what it sends after a kill is never sent (so the ledger does not count an EndTxn that never left)."""

    broker: BrokerProcess
    plan: KillPlan
    armed: asyncio.Event

    def _before(self) -> None:
        if self.broker.process is None or self.broker.process.poll() is not None:
            raise NotSent("the broker was killed")

    def _after(self, step: str) -> None:
        if self.armed.is_set() and self.plan.step == step:
            self.broker.kill()

    async def produce(self, topic: str, partition: int, *values: bytes) -> tuple[ErrorCode, int]:
        self._before()
        answer = await super().produce(topic, partition, *values)
        self._after("produce")
        return answer

    async def commit_offsets(self, group: str, topic: str, offsets: dict[int, int]) -> ErrorCode:
        answer = await super().commit_offsets(group, topic, offsets)
        self._after("commit_offsets")
        return answer

    async def end(self, commit: bool) -> ErrorCode:
        self._before()
        answer = await super().end(commit)
        self._after("end")
        return answer


async def _init(producer: TxnWire) -> None:
    """InitProducerId as a client after an error (KIP-360: with its producer id and epoch); a producer fenced
    meanwhile (its transaction timed out) starts over as a new one, as an application restarts it."""
    error = await producer.init()
    if error in (ErrorCode.PRODUCER_FENCED, ErrorCode.INVALID_PRODUCER_EPOCH):
        producer.producer_id, producer.epoch = -1, -1
        error = await producer.init()
    assert error == ErrorCode.NONE, error.name


async def _pipeline(producer: KillingProducer, ledger: Ledger, rng: random.Random) -> None:
    """Transactions back to back until the broker is gone; a refused step (a fenced producer) re-initialises."""
    try:
        if producer.producer_id == -1:
            await _init(producer)
        while True:
            partitions = sorted(rng.sample(OUTPUT_PARTITIONS, rng.choice([2, 3])))
            try:
                await run_transaction(
                    producer, ledger, partitions, per_partition=rng.randint(1, 3), commit=rng.random() < 0.75
                )
            except TxnFailed:
                await _init(producer)
    except DISCONNECTED:
        return
    finally:
        producer.client.writer.close()


async def _round(
    broker: BrokerProcess, producers: dict[str, KillingProducer], ledger: Ledger, rng: random.Random
) -> None:
    """Load until the kill; the producers live on (only the broker dies)."""
    plan = KillPlan.draw(rng)
    armed = asyncio.Event()
    pipelines = []
    for producer in producers.values():
        producer.client = await connect(broker.port)
        producer.plan, producer.armed = plan, armed
        pipelines.append(asyncio.ensure_future(_pipeline(producer, ledger, random.Random(rng.random()))))
    await asyncio.sleep(plan.delay_s)
    if plan.step is None:
        broker.kill()
    else:
        armed.set()
    await asyncio.gather(*pipelines)


async def _come_back(producers: dict[str, KillingProducer], ledger: Ledger, port: int, resume: bool) -> None:
    """The producers reconnect at once. `resume`: each goes on with its transaction where it was (Produce and
    EndTxn sent again when unanswered), which commits it unless it timed out meanwhile (then it is refused);
    otherwise each initialises again, which aborts what it left open."""
    for transactional_id, producer in producers.items():
        producer.client = await connect(port)
        producer.armed = asyncio.Event()  # no kill while recovering
        txn = ledger.last(transactional_id)
        try:
            if resume and txn is not None and txn.end_answer is None:
                try:
                    await advance(producer, txn, ledger)
                except TxnFailed:
                    await _init(producer)
            else:
                await _init(producer)
        finally:
            await producer.client.close()


async def _recover(
    broker: BrokerProcess, producers: dict[str, KillingProducer], ledger: Ledger, rng: random.Random, where: str
) -> None:
    broker.start()
    if rng.random() < 0.3:  # killed again while it loads, resends markers and aborts what timed out
        await asyncio.sleep(rng.uniform(0.0, 0.4))
        broker.kill()
        broker.start()
    client = await connect(broker.port)
    await ledger.check_unsettled(client, f"{where}, restarted")
    recovery = rng.choice(["timeout", "init", "resume"])
    if recovery != "timeout":  # else the open transactions are left to abort at their timeout
        await _come_back(producers, ledger, broker.port, resume=recovery == "resume")
        await ledger.check_unsettled(client, f"{where}, producers back ({recovery})")
    await wait_until_awaited(lambda: ledger.settled(client), SETTLE_S, what=f"{where}: every transaction to settle")
    await ledger.check_settled(client, f"{where}, settled after {recovery}")
    await client.close()


@pytest.mark.campaign
@pytest.mark.parametrize("seed", range(SEEDS))
async def test_kill9_during_a_stream_of_transactions_keeps_them_all_or_nothing(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    ledger = Ledger(OUTPUT, OUTPUT_PARTITIONS, INPUT, INPUT_PARTITIONS)
    broker = BrokerProcess(tmp_path / "data", BROKER)
    try:
        broker.start()
        client = await connect(broker.port)
        await ledger.create_topics(client)
        await client.close()
        producers = {t: KillingProducer(client, t, TIMEOUT_MS) for t in IDS}
        for producer in producers.values():
            producer.broker = broker
        for round_number in range(ROUNDS):
            await _round(broker, producers, ledger, rng)
            await _recover(broker, producers, ledger, rng, f"seed {seed}, round {round_number}")
        assert any(txn.committed for txn in ledger.txns.values()), "the clients saw commits"
    finally:
        broker.kill()
