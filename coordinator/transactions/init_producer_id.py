"""InitProducerId (Kafka's `handleInitProducerId` / `prepareInitProducerIdTransit`, T5-T16).

Without a transactional id: a fresh producer id at epoch 0, nothing written (an idempotent producer). With one:

1. "" is INVALID_REQUEST; a timeout outside 1..transaction.max.timeout.ms is INVALID_TRANSACTION_TIMEOUT (before
   the coordinator is even looked up); the coordinator's own errors (NOT_COORDINATOR, LOAD_IN_PROGRESS).
2. An unknown id gets a new producer id and is cached at epoch -1 in Empty before anything is written (as Kafka
   does), so the bump below makes its first epoch 0.
3. A pending transition is CONCURRENT_TRANSACTIONS. KIP-360: an expected producer id is valid if the id is brand
   new (epoch -1), or it is the current producer id, or it is the previous one with an exhausted epoch (a retry
   whose answer was lost after a rotation); otherwise PRODUCER_FENCED.
4. By state: PrepareCommit/PrepareAbort are CONCURRENT_TRANSACTIONS (the client retries once the markers are
   written); Empty/Complete* bump the epoch (T12/T13), or rotate to a new producer id when the epoch is exhausted;
   Ongoing fences the producer (PrepareEpochFence, epoch + 1), aborts the transaction with that epoch and answers
   CONCURRENT_TRANSACTIONS, so the retry bumps again and the fence epoch is never handed out (T14).

The answer is sent once the new metadata is durable (T16).
"""

from __future__ import annotations

from collections.abc import Callable

from coordinator.partitions import Serves
from coordinator.transactions.end_txn import end_transaction, illegal_state
from coordinator.transactions.markers import TransactionResult
from coordinator.transactions.metadata import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    IllegalTransitionError,
    TransactionMetadata,
    TxnTransit,
    is_epoch_exhausted,
)
from coordinator.transactions.parts import TxnParts
from coordinator.transactions.producer_ids import ProducerIdsUnavailableError
from coordinator.transactions.state import TransactionState
from protocol.errors import ErrorCode

_S = TransactionState

Answer = Callable[[ErrorCode, int, int], None]
"""Receives (error, producer id, epoch); an error comes with -1, -1 (Kafka's `initTransactionError`)."""


def allocate_producer_id(parts: TxnParts) -> int | ErrorCode:
    """A new producer id, or the error InitProducerId answers when none can be had now."""
    try:
        return parts.producer_ids.allocate()
    except ProducerIdsUnavailableError as exc:
        return exc.code


def init_producer_id(
    parts: TxnParts,
    transactional_id: str | None,
    timeout_ms: int,
    expected: tuple[int, int] | None,
    answer: Answer,
    serves: Serves | None = None,
) -> None:
    """InitProducerId; `expected` is the request's (producer id, epoch) when it sent both (KIP-360, v3+); `serves`
    the asking node's (a transactional id is looked up on its coordinator, any node allocates an idempotent
    producer's id)."""

    def failed(error: ErrorCode) -> None:
        answer(error, NO_PRODUCER_ID, NO_PRODUCER_EPOCH)

    if transactional_id is None:
        producer_id = allocate_producer_id(parts)
        if isinstance(producer_id, ErrorCode):
            failed(producer_id)
        else:
            answer(ErrorCode.NONE, producer_id, 0)
        return
    if not transactional_id:
        failed(ErrorCode.INVALID_REQUEST)
        return
    if not 0 < timeout_ms <= parts.config.transaction_max_timeout_ms:
        failed(ErrorCode.INVALID_TRANSACTION_TIMEOUT)
        return
    found = parts.cache.lookup(transactional_id, serves)
    if isinstance(found, ErrorCode):
        failed(found)
        return
    if found is None:
        producer_id = allocate_producer_id(parts)
        if isinstance(producer_id, ErrorCode):
            failed(producer_id)
            return
        created = TransactionMetadata(
            transactional_id,
            producer_id=producer_id,
            producer_epoch=NO_PRODUCER_EPOCH,
            timeout_ms=timeout_ms,
            state=_S.EMPTY,
            last_update_timestamp_ms=parts.time.wall_ms,
        )
        found = parts.cache.put_if_absent(created)
    metadata = found
    try:
        transit = _prepare(parts, metadata, timeout_ms, expected)
    except IllegalTransitionError as exc:
        illegal_state(parts, metadata, str(exc), failed)
        return
    if isinstance(transit, ErrorCode):
        failed(transit)
        return
    if transit.state is _S.PREPARE_EPOCH_FENCE:
        parts.events.txn_fenced(transactional_id, transit.producer_id, transit.producer_epoch, "reinit")
        end_transaction(
            parts,
            transactional_id,
            transit.producer_id,
            transit.producer_epoch,
            TransactionResult.ABORT,
            from_client=False,
            transaction_version=parts.config.transaction_version,  # the server's, as Kafka's internal aborts
            then=lambda error, _pid, _epoch: failed(
                error if error != ErrorCode.NONE else ErrorCode.CONCURRENT_TRANSACTIONS
            ),
        )
        return

    def written(error: ErrorCode) -> None:
        if error == ErrorCode.NONE:
            answer(ErrorCode.NONE, transit.producer_id, transit.producer_epoch)
        else:
            failed(error)

    parts.log.append(metadata, transit, written)


def _prepare(
    parts: TxnParts, metadata: TransactionMetadata, timeout_ms: int, expected: tuple[int, int] | None
) -> TxnTransit | ErrorCode:
    """Kafka's `prepareInitProducerIdTransit`: the transition to write, or the error to answer."""
    if metadata.pending_state is not None:
        return ErrorCode.CONCURRENT_TRANSACTIONS
    if expected is not None and not _valid_expected_producer(metadata, *expected):
        return ErrorCode.PRODUCER_FENCED
    state = metadata.state
    if state.is_prepare:
        return ErrorCode.CONCURRENT_TRANSACTIONS
    if state in (_S.EMPTY, _S.COMPLETE_COMMIT, _S.COMPLETE_ABORT):
        now_ms = parts.time.wall_ms
        expected_epoch = None if expected is None else expected[1]
        if metadata.is_producer_epoch_exhausted and expected_epoch in (None, metadata.producer_epoch):
            new_producer_id = allocate_producer_id(parts)
            if isinstance(new_producer_id, ErrorCode):
                return new_producer_id
            return metadata.prepare_producer_id_rotation(
                new_producer_id, timeout_ms, now_ms, record_last_epoch=expected is not None
            )
        return metadata.prepare_increment_producer_epoch(timeout_ms, expected_epoch, now_ms)
    if state is _S.ONGOING:
        return metadata.prepare_fence_producer_epoch()
    raise IllegalTransitionError(f"found in state {state.state_name} at InitProducerId")


def _valid_expected_producer(metadata: TransactionMetadata, producer_id: int, epoch: int) -> bool:
    return (
        metadata.producer_epoch == NO_PRODUCER_EPOCH
        or producer_id == metadata.producer_id
        or (producer_id == metadata.previous_producer_id and is_epoch_exhausted(epoch))
    )
