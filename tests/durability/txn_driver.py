"""One consume-transform-produce transaction, step by step, recorded in a `Ledger` as the client learns each answer.

The steps are a transaction version 0/1 client's: AddPartitionsToTxn for the output partitions, one Produce per
partition, AddOffsetsToTxn and TxnOffsetCommit for the group, EndTxn. `stop_after` parks the transaction right after
one of them (the crash tests kill the broker there). What may reach the log is recorded before the request is sent
(a kill can land after the broker wrote it and before the answer), what the client was told after the answer.
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
    """Run the steps up to and including `stop_after` (one of STEPS); raises TxnFailed on a refused step."""
    assert stop_after in STEPS, stop_after
    txn = ledger.begin(producer.transactional_id)
    _check(txn, "AddPartitionsToTxn", await producer.add_partitions(ledger.output, partitions))
    if stop_after == "add_partitions":
        return txn
    for partition in partitions:
        values = [txn.value(partition, i) for i in range(per_partition)]
        txn.sent[partition] = values
        error, _ = await producer.produce(ledger.output, partition, *values)
        _check(txn, "Produce", error)
        if stop_after == "first_produce":
            return txn
    if stop_after == "produce":
        return txn
    group = ledger.group(producer.transactional_id)
    _check(txn, "AddOffsetsToTxn", await producer.add_offsets(group))
    if stop_after == "add_offsets":
        return txn
    _check(txn, "TxnOffsetCommit", await producer.commit_offsets(group, ledger.input, txn.offsets))
    txn.offsets_acked = True
    if stop_after == "commit_offsets":
        return txn
    txn.end = commit
    txn.end_answer = await producer.end(commit)
    _check(txn, "EndTxn", txn.end_answer)
    return txn
