"""Ending a transaction: EndTxn from a client and the coordinator's own aborts (Kafka's `endTransactionWithTV1`,
T22, T28, T29, T31).

Checks, in Kafka's order: an empty id is INVALID_REQUEST; an unknown id or another producer id
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
"""

from __future__ import annotations

from coordinator.transactions.log import Then
from coordinator.transactions.markers import TransactionResult
from coordinator.transactions.metadata import NO_PRODUCER_EPOCH, IllegalTransitionError, TransactionMetadata, TxnTransit
from coordinator.transactions.parts import TxnParts, find_producer
from coordinator.transactions.state import TransactionState
from protocol.errors import ErrorCode

_S = TransactionState


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
    then: Then,
) -> None:
    """End the id's transaction with `result`; `then` gets what EndTxn answers."""
    found = find_producer(parts, transactional_id, producer_id)
    if isinstance(found, ErrorCode):
        then(found)
        return
    metadata = found
    if (from_client and producer_epoch != metadata.producer_epoch) or producer_epoch < metadata.producer_epoch:
        then(ErrorCode.PRODUCER_FENCED)
        return
    if metadata.pending_state not in (None, _S.PREPARE_EPOCH_FENCE):
        then(ErrorCode.CONCURRENT_TRANSACTIONS)
        return
    commit = result is TransactionResult.COMMIT
    state = metadata.state
    if state is _S.ONGOING:
        _prepare(parts, metadata, producer_epoch, result, then)
    elif state in (_S.COMPLETE_COMMIT, _S.COMPLETE_ABORT):
        then(ErrorCode.NONE if commit == (state is _S.COMPLETE_COMMIT) else ErrorCode.INVALID_TXN_STATE)
    elif state.is_prepare:
        then(
            ErrorCode.CONCURRENT_TRANSACTIONS if commit == (state is _S.PREPARE_COMMIT) else ErrorCode.INVALID_TXN_STATE
        )
    elif state is _S.EMPTY:
        then(ErrorCode.INVALID_TXN_STATE)
    else:
        illegal_state(parts, metadata, f"found in state {state.state_name} at EndTxn", then)


def _prepare(parts: TxnParts, metadata: TransactionMetadata, epoch: int, result: TransactionResult, then: Then) -> None:
    next_state = _S.PREPARE_COMMIT if result is TransactionResult.COMMIT else _S.PREPARE_ABORT
    epoch_fence = next_state is _S.PREPARE_ABORT and metadata.pending_state is _S.PREPARE_EPOCH_FENCE
    if epoch_fence:
        metadata.pending_state = None
        metadata.producer_epoch = epoch
        metadata.last_producer_epoch = NO_PRODUCER_EPOCH
    try:
        transit = metadata.prepare_abort_or_commit(next_state, parts.time.wall_ms)
    except IllegalTransitionError as exc:
        illegal_state(parts, metadata, str(exc), then)
        return

    def written(error: ErrorCode) -> None:
        if error != ErrorCode.NONE:
            if epoch_fence and parts.cache.is_current(metadata):
                metadata.has_failed_epoch_fence = True
            then(error)
            return
        _after_prepare(parts, metadata, transit, then)

    parts.log.append(metadata, transit, written)


def _after_prepare(parts: TxnParts, metadata: TransactionMetadata, transit: TxnTransit, then: Then) -> None:
    """T29: PrepareX is durable; check again (the write completed the transition), answer, send the markers."""
    if not parts.cache.is_current(metadata):
        then(ErrorCode.NOT_COORDINATOR)
        return
    if metadata.producer_id != transit.producer_id:
        then(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        return
    if metadata.producer_epoch != transit.producer_epoch:
        then(ErrorCode.PRODUCER_FENCED)
        return
    if metadata.pending_state is not None:
        then(ErrorCode.CONCURRENT_TRANSACTIONS)
        return
    if metadata.state is not transit.state:
        then(ErrorCode.INVALID_TXN_STATE)
        return
    try:
        complete = metadata.prepare_complete(parts.time.wall_ms)
    except IllegalTransitionError as exc:
        illegal_state(parts, metadata, str(exc), then)
        return
    then(ErrorCode.NONE)
    parts.markers.send(metadata, complete, "decided")
