"""One consume-transform-produce transaction, step by step, recorded in a `Ledger` as the client learns each answer.

The steps are a transaction version 0/1 client's: AddPartitionsToTxn for the output partitions, one Produce per
partition, AddOffsetsToTxn and TxnOffsetCommit for the group, EndTxn. `stop_after` parks the transaction right after
one of them (the crash tests kill the broker there), `advance` goes on with it. What may reach the log is recorded
before the request is sent (a kill can land after the broker wrote it and before the answer), what the client was
told after the answer; a producer that knows a request was never sent (`NotSent`) takes it back.
"""

from __future__ import annotations

from collections.abc import Sequence

from protocol.errors import ErrorCode
from tests.durability.txn_ledger import Ledger, Txn
from tests.support.txn_wire import TxnWire

STEPS = ("add_partitions", "first_produce", "produce", "add_offsets", "commit_offsets", "end")


class TxnFailed(Exception):
    """The broker refused a step (e.g. the producer was fenced after its transaction timed out)."""

    def __init__(self, txn: Txn, step: str, error: ErrorCode) -> None:
        super().__init__(f"{txn.where()}: {step} answered {error.name}")
        self.error = error


class NotSent(ConnectionError):
    """The request was never sent: the broker was already gone (a campaign's producer knows it killed it)."""


def _check(txn: Txn, step: str, error: ErrorCode) -> None:
    if error != ErrorCode.NONE:
        raise TxnFailed(txn, step, error)


async def run_transaction(
    producer: TxnWire,
    ledger: Ledger,
    partitions: Sequence[int],
    *,
    per_partition: int = 2,
    commit: bool = True,
    stop_after: str = "end",
) -> Txn:
    """Begin a transaction and run its steps up to and including `stop_after` (one of STEPS)."""
    txn = ledger.begin(producer.transactional_id, list(partitions), per_partition, commit)
    await advance(producer, txn, ledger, stop_after)
    return txn


async def advance(producer: TxnWire, txn: Txn, ledger: Ledger, stop_after: str = "end") -> None:
    """Run the steps of `txn` not answered yet, up to and including `stop_after`; raises TxnFailed on a refused
    step. Going on after a broker restart is what a client does: an unanswered Produce is sent again with the same
    sequence, an unanswered EndTxn again with the same outcome."""
    assert stop_after in STEPS, stop_after
    if not txn.added:
        _check(txn, "AddPartitionsToTxn", await producer.add_partitions(ledger.output, txn.partitions))
        txn.added = True
    if stop_after == "add_partitions":
        return
    for partition in txn.partitions:
        if partition not in txn.acked:
            await _produce(producer, txn, ledger, partition)
        if stop_after == "first_produce":
            return
    if stop_after == "produce":
        return
    group = ledger.group(producer.transactional_id)
    if not txn.offsets_added:
        _check(txn, "AddOffsetsToTxn", await producer.add_offsets(group))
        txn.offsets_added = True
    if stop_after == "add_offsets":
        return
    if not txn.offsets_acked:
        _check(txn, "TxnOffsetCommit", await producer.commit_offsets(group, ledger.input, txn.offsets))
        txn.offsets_acked = True
    if stop_after == "commit_offsets":
        return
    await _end(producer, txn)


async def _produce(producer: TxnWire, txn: Txn, ledger: Ledger, partition: int) -> None:
    sent_before = partition in txn.sent
    txn.sent[partition] = [txn.value(partition, i) for i in range(txn.per_partition)]
    try:
        error, _ = await producer.produce(ledger.output, partition, *txn.sent[partition])
    except NotSent:
        if not sent_before:
            del txn.sent[partition]
        raise
    _check(txn, "Produce", error)
    txn.acked.add(partition)


async def _end(producer: TxnWire, txn: Txn) -> None:
    sent_before = txn.end is not None
    txn.end = txn.commit
    try:
        txn.end_answer = await producer.end(txn.commit)
    except NotSent:
        if not sent_before:
            txn.end = None
        raise
    _check(txn, "EndTxn", txn.end_answer)
