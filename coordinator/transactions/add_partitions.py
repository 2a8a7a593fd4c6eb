"""Adding partitions to a transaction, and asking whether they are in it (Kafka's
`handleAddPartitionsToTransaction` and `handleVerifyPartitionsInTransaction`, T24, T25, T27).

Adding, in Kafka's order: an empty id is INVALID_REQUEST; an unknown id or another producer id
INVALID_PRODUCER_ID_MAPPING; another epoch PRODUCER_FENCED; a pending transition, PrepareCommit or PrepareAbort
CONCURRENT_TRANSACTIONS; partitions that are all in an Ongoing transaction already are NONE without a write;
otherwise the transaction becomes (or stays) Ongoing with the union of partitions, and the answer waits for the
write. From Empty or Complete* this begins a transaction and its timeout starts (T46).

Verifying (AddPartitionsToTxn v4+ `VerifyOnly`, and the data plane's check before a transactional produce, T39)
writes nothing: per partition NONE if it is in the transaction, else TRANSACTION_ABORTABLE; the id's own errors
(INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED, CONCURRENT_TRANSACTIONS while the outcome is being written) apply
to every partition.
"""

from __future__ import annotations

from collections.abc import Collection

from coordinator.offsets import TopicPartition
from coordinator.partitions import Serves
from coordinator.transactions.end_txn import illegal_state
from coordinator.transactions.log import Then
from coordinator.transactions.metadata import IllegalTransitionError, TransactionMetadata
from coordinator.transactions.parts import TxnParts, find_producer
from coordinator.transactions.state import TransactionState
from protocol.errors import ErrorCode


def _producer(
    parts: TxnParts, transactional_id: str, producer_id: int, producer_epoch: int, serves: Serves | None
) -> TransactionMetadata | ErrorCode:
    """The id's metadata if the producer (id and epoch) is the id's current one, else the error to answer."""
    found = find_producer(parts, transactional_id, producer_id, serves)
    if isinstance(found, ErrorCode):
        return found
    if found.producer_epoch != producer_epoch:
        return ErrorCode.PRODUCER_FENCED
    return found


def add_partitions(
    parts: TxnParts,
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    partitions: Collection[TopicPartition],
    then: Then,
    *,
    client_transaction_version: int = 0,
    serves: Serves | None = None,
) -> None:
    """T25: add `partitions` to the id's transaction; `then` gets what the request answers for all of them. The
    client's transaction version is recorded with the transaction (T70). `serves`: the asking node's, for a
    request (AddPartitionsToTxn, AddOffsetsToTxn); None for the broker's implicit add (KIP-890 part 2)."""
    found = _producer(parts, transactional_id, producer_id, producer_epoch, serves)
    if isinstance(found, ErrorCode):
        then(found)
        return
    metadata = found
    if metadata.pending_state is not None or metadata.state.is_prepare:
        then(ErrorCode.CONCURRENT_TRANSACTIONS)
        return
    if metadata.state is TransactionState.ONGOING and metadata.partitions.issuperset(partitions):
        then(ErrorCode.NONE)
        return
    try:
        transit = metadata.prepare_add_partitions(partitions, parts.time.wall_ms, client_transaction_version)
    except IllegalTransitionError as exc:
        illegal_state(parts, metadata, str(exc), then)
        return
    parts.log.append(metadata, transit, then)


def verify_partitions(
    parts: TxnParts,
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    partitions: Collection[TopicPartition],
    serves: Serves | None = None,
) -> dict[TopicPartition, ErrorCode]:
    """T24/T39: which of `partitions` are in the id's ongoing transaction (NONE) or not (TRANSACTION_ABORTABLE).
    `serves`: the asking node's, for AddPartitionsToTxn VerifyOnly; None for the data plane's own check."""
    found = _producer(parts, transactional_id, producer_id, producer_epoch, serves)
    if not isinstance(found, ErrorCode) and found.state.is_prepare:
        found = ErrorCode.CONCURRENT_TRANSACTIONS
    if isinstance(found, ErrorCode):
        return dict.fromkeys(partitions, found)
    return {tp: ErrorCode.NONE if tp in found.partitions else ErrorCode.TRANSACTION_ABORTABLE for tp in partitions}
