"""Ending a transaction: EndTxn from a client and the coordinator's own aborts (Kafka's `endTransactionWithTV1` and
`endTransaction`, T22, T28-T31, T70-T75).

Transaction version 0/1 (EndTxn v0-4, and internal aborts while the server runs version 0/1). Checks, in Kafka's
order: an empty id is INVALID_REQUEST; an unknown id or another producer id
INVALID_PRODUCER_ID_MAPPING; a client's epoch must equal the id's (an internal abort only must not be older, since
it carries the fence epoch) else PRODUCER_FENCED; a pending transition other than an epoch fence is
CONCURRENT_TRANSACTIONS. Then by state:

    state           COMMIT                    ABORT
    Ongoing         PrepareCommit (written)   PrepareAbort (written)
    PrepareCommit   CONCURRENT_TRANSACTIONS   INVALID_TXN_STATE
    PrepareAbort    INVALID_TXN_STATE         CONCURRENT_TRANSACTIONS
    CompleteCommit  NONE (a retry)            INVALID_TXN_STATE
    CompleteAbort   INVALID_TXN_STATE         NONE (a retry)
    Empty           INVALID_TXN_STATE         INVALID_TXN_STATE

An abort that follows an epoch fence (InitProducerId during a transaction, or its timeout) takes over the fence:
the pending PrepareEpochFence is dropped, the bumped epoch goes into the metadata and is written with
PrepareAbort. If that write fails the epoch stays bumped and `has_failed_epoch_fence` makes the next fence reuse
it (T14). Once PrepareX is durable the same checks run again (T29), the client is answered, CompleteX is prepared
and the markers are handed to the broker.

Transaction version 2 (EndTxn v5, and internal aborts while the server runs version 2; T71-T75): every outcome
bumps the epoch in its PrepareX record, so a retry of an EndTxn whose answer was lost arrives with the epoch just
below the stored one (`retry_on_epoch_bump`), or, after the epoch ran out and the producer id rotated, with the
previous producer id at epoch 32766 (`retry_on_overflow`). Checks, in Kafka 4.4's order: a pending transition
other than an epoch fence is CONCURRENT_TRANSACTIONS; another producer id (but the retry's previous one)
INVALID_PRODUCER_ID_MAPPING; then the epoch is valid when: Ongoing/Empty, equal to the stored one; PrepareX, a
retry; CompleteX, a retry or equal; under an epoch fence, as in version 0/1 (else PRODUCER_FENCED). An abort that
follows an epoch fence clears it and bumps the epoch once, to the fence's. Then:

    state           COMMIT (retry / current)          ABORT (retry / current)
    Ongoing         PrepareCommit, bumped             PrepareAbort, bumped
    PrepareCommit   CONCURRENT_TRANSACTIONS           INVALID_TXN_STATE
    PrepareAbort    INVALID_TXN_STATE                 CONCURRENT_TRANSACTIONS
    CompleteCommit  NONE / INVALID_TXN_STATE          INVALID_TXN_STATE / PrepareAbort, bumped (no markers)
    CompleteAbort   INVALID_TXN_STATE                 NONE / PrepareAbort, bumped (no markers)
    Empty           (PRODUCER_FENCED) / INVALID_TXN_STATE   (PRODUCER_FENCED) / PrepareAbort, bumped (no markers)

A bump that exhausts the epoch pre-allocates the next producer id (T72). A retry's NONE carries the stored producer
id and epoch; a decided outcome carries those of the CompleteX it will become (the new id at epoch 0 after a
rotation), which is what the EndTxn v5 response tells the client to use next.
"""

from __future__ import annotations

from collections.abc import Callable

from coordinator.partitions import Serves
from coordinator.transactions.log import Then
from coordinator.transactions.markers import TransactionResult
from coordinator.transactions.metadata import (
    INT16_MAX,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    IllegalTransitionError,
    TransactionMetadata,
    TxnTransit,
    supports_epoch_bump,
)
from coordinator.transactions.parts import TxnParts, find_producer
from coordinator.transactions.producer_ids import ProducerIdsUnavailableError
from coordinator.transactions.state import TransactionState
from protocol.errors import ErrorCode

_S = TransactionState

Ended = Callable[[ErrorCode, int, int], None]
"""EndTxn's continuation: (error, producer id, producer epoch); the id and epoch are -1 unless version 2 answers
NONE (EndTxn v5 carries them)."""


def illegal_state(parts: TxnParts, metadata: TransactionMetadata, detail: str, then: Then) -> None:
    """Kafka throws IllegalStateException here (a coordinator bug); the request answers UNKNOWN_SERVER_ERROR."""
    parts.events.illegal_state(metadata.transactional_id, detail)
    then(ErrorCode.UNKNOWN_SERVER_ERROR)


def end_transaction(
    parts: TxnParts,
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    result: TransactionResult,
    *,
    from_client: bool,
    transaction_version: int = 0,
    then: Ended,
    serves: Serves | None = None,
) -> None:
    """End the id's transaction with `result` by the rules of `transaction_version`; `then` gets what EndTxn
    answers. `serves`: the asking node's, for EndTxn; None for the coordinator's own aborts."""

    def failed(error: ErrorCode) -> None:
        then(error, NO_PRODUCER_ID, NO_PRODUCER_EPOCH)

    if supports_epoch_bump(transaction_version):
        looked_up = _lookup(parts, transactional_id, serves)
        if isinstance(looked_up, ErrorCode):
            failed(looked_up)
            return
        _end_v2(parts, looked_up, producer_id, producer_epoch, result, from_client, transaction_version, then)
        return
    found = find_producer(parts, transactional_id, producer_id, serves)
    if isinstance(found, ErrorCode):
        failed(found)
        return
    metadata = found
    if (from_client and producer_epoch != metadata.producer_epoch) or producer_epoch < metadata.producer_epoch:
        failed(ErrorCode.PRODUCER_FENCED)
        return
    if metadata.pending_state not in (None, _S.PREPARE_EPOCH_FENCE):
        failed(ErrorCode.CONCURRENT_TRANSACTIONS)
        return
    commit = result is TransactionResult.COMMIT
    state = metadata.state
    if state is _S.ONGOING:
        _prepare(parts, metadata, producer_epoch, result, 0, NO_PRODUCER_ID, then)
    elif state in (_S.COMPLETE_COMMIT, _S.COMPLETE_ABORT):
        failed(ErrorCode.NONE if commit == (state is _S.COMPLETE_COMMIT) else ErrorCode.INVALID_TXN_STATE)
    elif state.is_prepare:
        failed(
            ErrorCode.CONCURRENT_TRANSACTIONS if commit == (state is _S.PREPARE_COMMIT) else ErrorCode.INVALID_TXN_STATE
        )
    elif state is _S.EMPTY:
        failed(ErrorCode.INVALID_TXN_STATE)
    else:
        illegal_state(parts, metadata, f"found in state {state.state_name} at EndTxn", failed)


def _lookup(parts: TxnParts, transactional_id: str, serves: Serves | None) -> TransactionMetadata | ErrorCode:
    """Version 2's first checks: an empty id, the coordinator's lookup error, an unknown id (the producer id is
    checked later, after the pending transition, since a retry may name the previous one, T74)."""
    if not transactional_id:
        return ErrorCode.INVALID_REQUEST
    found = parts.cache.lookup(transactional_id, serves)
    if found is None:
        return ErrorCode.INVALID_PRODUCER_ID_MAPPING
    return found


def _retry_on_overflow(metadata: TransactionMetadata, producer_id: int, producer_epoch: int) -> bool:
    return (
        metadata.pending_state is not _S.PREPARE_EPOCH_FENCE
        and metadata.previous_producer_id == producer_id
        and producer_epoch == INT16_MAX - 1
        and metadata.producer_epoch == 0
    )


def _end_v2(
    parts: TxnParts,
    metadata: TransactionMetadata,
    producer_id: int,
    producer_epoch: int,
    result: TransactionResult,
    from_client: bool,
    transaction_version: int,
    then: Ended,
) -> None:
    """Kafka's `endTransaction` for transaction version 2 (see the module docstring)."""

    def failed(error: ErrorCode) -> None:
        then(error, NO_PRODUCER_ID, NO_PRODUCER_EPOCH)

    epoch_fence = metadata.pending_state is _S.PREPARE_EPOCH_FENCE
    on_overflow = _retry_on_overflow(metadata, producer_id, producer_epoch)
    on_bump = not epoch_fence and metadata.producer_epoch == producer_epoch + 1
    retry = on_bump or on_overflow
    state = metadata.state
    if metadata.pending_state is not None and not epoch_fence:
        failed(ErrorCode.CONCURRENT_TRANSACTIONS)
        return
    if metadata.producer_id != producer_id and not on_overflow:
        failed(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        return
    if epoch_fence:
        valid = (not from_client or producer_epoch == metadata.producer_epoch) and (
            producer_epoch >= metadata.producer_epoch
        )
    elif state.is_prepare:
        valid = on_bump
    elif state in (_S.COMPLETE_COMMIT, _S.COMPLETE_ABORT):
        valid = retry or producer_epoch == metadata.producer_epoch
    else:
        valid = producer_epoch == metadata.producer_epoch
    if not valid:
        failed(ErrorCode.PRODUCER_FENCED)
        return
    commit = result is TransactionResult.COMMIT
    if state is _S.ONGOING:
        outcome: ErrorCode | None = None
    elif state.is_prepare:
        outcome = (
            ErrorCode.CONCURRENT_TRANSACTIONS if commit == (state is _S.PREPARE_COMMIT) else ErrorCode.INVALID_TXN_STATE
        )
    elif state is _S.COMPLETE_COMMIT and commit:
        outcome = ErrorCode.NONE if retry else ErrorCode.INVALID_TXN_STATE
    elif state is _S.COMPLETE_COMMIT:
        outcome = ErrorCode.INVALID_TXN_STATE if retry else None
    elif state is _S.COMPLETE_ABORT:
        outcome = ErrorCode.INVALID_TXN_STATE if commit else (ErrorCode.NONE if retry else None)
    elif state is _S.EMPTY:
        outcome = ErrorCode.INVALID_TXN_STATE if commit else None
    else:
        illegal_state(parts, metadata, f"found in state {state.state_name} at EndTxn", failed)
        return
    if outcome == ErrorCode.NONE:
        then(ErrorCode.NONE, metadata.producer_id, metadata.producer_epoch)  # a retry: what the client holds now
        return
    if outcome is not None:
        failed(outcome)
        return
    next_producer_id = NO_PRODUCER_ID
    if metadata.is_producer_epoch_exhausted:
        try:
            next_producer_id = parts.producer_ids.allocate()
        except ProducerIdsUnavailableError as exc:
            failed(exc.code)
            return
    _prepare(parts, metadata, producer_epoch, result, transaction_version, next_producer_id, then)


def _prepare(
    parts: TxnParts,
    metadata: TransactionMetadata,
    epoch: int,
    result: TransactionResult,
    transaction_version: int,
    next_producer_id: int,
    then: Ended,
) -> None:
    next_state = _S.PREPARE_COMMIT if result is TransactionResult.COMMIT else _S.PREPARE_ABORT
    epoch_fence = next_state is _S.PREPARE_ABORT and metadata.pending_state is _S.PREPARE_EPOCH_FENCE
    no_partition_added = metadata.state is not _S.ONGOING

    def failed(error: ErrorCode) -> None:
        then(error, NO_PRODUCER_ID, NO_PRODUCER_EPOCH)

    if epoch_fence:  # the abort takes the fence's place: version 0/1 writes the fence epoch, version 2 bumps to it
        metadata.pending_state = None
        if not supports_epoch_bump(transaction_version):
            metadata.producer_epoch = epoch
            metadata.last_producer_epoch = NO_PRODUCER_EPOCH
    try:
        transit = metadata.prepare_abort_or_commit(
            next_state,
            parts.time.wall_ms,
            client_transaction_version=transaction_version,
            next_producer_id=next_producer_id,
            no_partition_added=no_partition_added,
        )
    except IllegalTransitionError as exc:
        illegal_state(parts, metadata, str(exc), failed)
        return

    def written(error: ErrorCode) -> None:
        if error != ErrorCode.NONE:
            if epoch_fence and parts.cache.is_current(metadata):
                metadata.has_failed_epoch_fence = True
            failed(error)
            return
        _after_prepare(parts, metadata, transit, epoch, then)

    parts.log.append(metadata, transit, written)


def _after_prepare(
    parts: TxnParts, metadata: TransactionMetadata, transit: TxnTransit, epoch: int, then: Ended
) -> None:
    """T29: PrepareX is durable; check again (the write completed the transition), answer, send the markers. Under
    version 2 the stored epoch is the requested one plus the bump, and the answer names the producer id and epoch
    of the CompleteX to come (T71)."""

    def failed(error: ErrorCode) -> None:
        then(error, NO_PRODUCER_ID, NO_PRODUCER_EPOCH)

    v2 = supports_epoch_bump(transit.client_transaction_version)
    if not parts.cache.is_current(metadata):
        failed(ErrorCode.NOT_COORDINATOR)
        return
    if metadata.producer_id != transit.producer_id:
        failed(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        return
    if metadata.producer_epoch not in ((epoch, epoch + 1) if v2 else (transit.producer_epoch,)):
        failed(ErrorCode.PRODUCER_FENCED)
        return
    if metadata.pending_state is not None:
        failed(ErrorCode.CONCURRENT_TRANSACTIONS)
        return
    if metadata.state is not transit.state:
        failed(ErrorCode.INVALID_TXN_STATE)
        return
    try:
        complete = metadata.prepare_complete(parts.time.wall_ms)
    except IllegalTransitionError as exc:
        illegal_state(parts, metadata, str(exc), failed)
        return
    if v2:
        then(ErrorCode.NONE, complete.producer_id, complete.producer_epoch)
    else:
        failed(ErrorCode.NONE)
    parts.markers.send(metadata, complete, "decided")
