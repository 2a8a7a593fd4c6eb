"""ProducerStateManager: sequences, epochs, open transactions and markers, as Kafka's ProducerAppendInfo checks
them (T37-T39, T41); the log-level behaviour is in test_transactions.py."""

from __future__ import annotations

import pytest

from protocol.control_records import ControlRecordType, EndTxnMarker, encode_end_txn_marker_batch
from protocol.records import BatchHeader, peek_batch_header
from storage.errors import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceError,
    StorageError,
    TransactionCoordinatorFencedError,
)
from storage.producer_state import CompletedTxn, ProducerStateManager, ProducerSummary
from storage.validation import AppendOrigin
from tests.storage.helpers import producer_batch

CLIENT, COORDINATOR = AppendOrigin.CLIENT, AppendOrigin.COORDINATOR
COMMIT, ABORT = ControlRecordType.COMMIT, ControlRecordType.ABORT


def header(
    offset: int, pid: int, epoch: int = 0, seq: int = 0, count: int = 1, *, txn: bool = False, ts: int = 1_000
) -> BatchHeader:
    values = [b"v"] * count
    data = producer_batch(*values, producer=(pid, epoch, seq), transactional=txn, timestamp=ts, base_offset=offset)
    return peek_batch_header(data)


def marker_header(offset: int, pid: int, epoch: int = 0, ts: int = 2_000) -> BatchHeader:
    """The header of a marker batch (the marker itself is passed separately, as the log does)."""
    marker = EndTxnMarker(COMMIT, 0)
    data = encode_end_txn_marker_batch(marker, producer_id=pid, producer_epoch=epoch, timestamp=ts, base_offset=offset)
    return peek_batch_header(data)


def append(
    state: ProducerStateManager, h: BatchHeader, origin: AppendOrigin = CLIENT, marker: EndTxnMarker | None = None
) -> list[CompletedTxn]:
    staged = state.prepare([(h, marker)], origin)
    assert staged.duplicate is None
    return state.commit(staged)


def end(
    state: ProducerStateManager, offset: int, pid: int, kind: ControlRecordType, epoch: int = 0, coord: int = 0
) -> list[CompletedTxn]:
    return append(state, marker_header(offset, pid, epoch), COORDINATOR, EndTxnMarker(kind, coord))


def refused(
    state: ProducerStateManager, h: BatchHeader, origin: AppendOrigin = CLIENT, marker: EndTxnMarker | None = None
) -> StorageError:
    with pytest.raises(StorageError) as info:
        state.prepare([(h, marker)], origin)
    return info.value


# --- idempotence ---------------------------------------------------------------------------------------------------


def test_sequences_continue_and_a_retry_is_a_duplicate_of_its_original() -> None:
    state = ProducerStateManager()
    append(state, header(0, pid=7, seq=0, count=2))
    append(state, header(2, pid=7, seq=2, count=1))
    retry = state.prepare([(header(9, pid=7, seq=0, count=2), None)], CLIENT)
    assert retry.duplicate is not None
    assert (retry.duplicate.first_offset, retry.duplicate.last_offset) == (0, 1)
    assert isinstance(refused(state, header(3, pid=7, seq=5)), OutOfOrderSequenceError)


def test_an_unknown_producer_may_start_at_any_sequence_a_new_epoch_only_at_zero() -> None:
    state = ProducerStateManager()
    append(state, header(0, pid=7, epoch=3, seq=42))
    assert isinstance(refused(state, header(1, pid=7, epoch=4, seq=1)), OutOfOrderSequenceError)
    append(state, header(1, pid=7, epoch=4, seq=0))


def test_an_older_epoch_is_invalid_producer_epoch_for_clients_and_coordinators() -> None:
    state = ProducerStateManager()
    append(state, header(0, pid=7, epoch=3))
    assert isinstance(refused(state, header(1, pid=7, epoch=2)), InvalidProducerEpochError)
    assert isinstance(refused(state, header(1, pid=7, epoch=2, seq=-1), COORDINATOR), InvalidProducerEpochError)


def test_coordinator_writes_skip_sequence_checks() -> None:
    state = ProducerStateManager()
    append(state, header(0, pid=7, seq=-1), COORDINATOR)
    append(state, header(1, pid=7, seq=-1), COORDINATOR)
    assert state.entry(7) is not None


def test_a_refused_append_leaves_the_state_as_it_was() -> None:
    state = ProducerStateManager()
    append(state, header(0, pid=7, seq=0))
    with pytest.raises(OutOfOrderSequenceError):
        state.prepare([(header(1, pid=7, seq=1), None), (header(2, pid=7, seq=9), None)], CLIENT)
    append(state, header(1, pid=7, seq=1))  # the first batch of the refused append was not applied


# --- transactions --------------------------------------------------------------------------------------------------


def test_t39_the_first_transactional_batch_opens_a_transaction_and_sets_the_first_unstable_offset() -> None:
    state = ProducerStateManager()
    append(state, header(0, pid=1))  # idempotent, not transactional
    assert state.first_unstable_offset() is None
    append(state, header(1, pid=2, txn=True))
    append(state, header(2, pid=2, seq=1, txn=True))
    append(state, header(3, pid=3, txn=True))
    assert state.first_unstable_offset() == 1
    assert state.ongoing_transactions() == {1: 2, 3: 3}
    assert state.has_ongoing_transaction(2, 0) and not state.has_ongoing_transaction(2, 1)


def test_t39_a_non_transactional_batch_during_an_open_transaction_is_invalid_txn_state() -> None:
    state = ProducerStateManager()
    append(state, header(0, pid=2, txn=True))
    assert isinstance(refused(state, header(1, pid=2, seq=1)), InvalidTxnStateError)


def test_t38_t41_a_marker_closes_the_transaction_and_reports_the_lso_after_it() -> None:
    state = ProducerStateManager()
    append(state, header(0, pid=2, txn=True))
    append(state, header(1, pid=3, txn=True))
    append(state, header(2, pid=2, seq=1, txn=True))
    [done] = end(state, 3, pid=2, kind=ABORT, coord=4)
    # The LSO recorded with an abort is the next open transaction of another producer (pid 3 at 1).
    assert done == CompletedTxn(2, 0, 3, True, 1)
    assert state.first_unstable_offset() == 1
    [done] = end(state, 4, pid=3, kind=COMMIT)
    assert done == CompletedTxn(3, 1, 4, False, 5)
    assert state.first_unstable_offset() is None
    entry = state.entry(2)
    assert entry is not None and (entry.coordinator_epoch, entry.current_txn_first_offset) == (4, None)


def test_t38_a_marker_without_an_open_transaction_completes_nothing_but_records_the_producer() -> None:
    state = ProducerStateManager()
    assert end(state, 0, pid=9, kind=COMMIT, epoch=2, coord=5) == []
    entry = state.entry(9)
    assert entry is not None and (entry.epoch, entry.coordinator_epoch) == (2, 5)


def test_t37_a_marker_with_an_older_producer_epoch_is_refused() -> None:
    state = ProducerStateManager()
    append(state, header(0, pid=2, epoch=5, txn=True))
    error = refused(state, marker_header(1, pid=2, epoch=4), COORDINATOR, EndTxnMarker(COMMIT, 0))
    assert isinstance(error, InvalidProducerEpochError)
    assert state.ongoing_transactions() == {0: 2}


def test_t37_a_marker_from_an_older_coordinator_epoch_is_fenced() -> None:
    state = ProducerStateManager()
    append(state, header(0, pid=2, txn=True))
    end(state, 1, pid=2, kind=COMMIT, coord=7)
    append(state, header(2, pid=2, seq=1, txn=True))
    error = refused(state, marker_header(3, pid=2), COORDINATOR, EndTxnMarker(ABORT, 6))
    assert isinstance(error, TransactionCoordinatorFencedError)


def test_t37_a_marker_with_a_newer_epoch_aborts_and_fences_the_old_epoch() -> None:
    """A timed-out transaction is aborted with the bumped epoch (T47): the zombie's next write is refused."""
    state = ProducerStateManager()
    append(state, header(0, pid=2, epoch=0, txn=True))
    [done] = end(state, 1, pid=2, kind=ABORT, epoch=1)
    assert done.is_aborted
    assert isinstance(refused(state, header(2, pid=2, epoch=0, seq=1, txn=True)), InvalidProducerEpochError)


def test_t71_a_transaction_version_2_commit_marker_moves_the_producer_to_the_bumped_epoch() -> None:
    """EndTxn v5 writes the markers with the epoch bumped: the producer's older epoch is refused, and its next
    transaction starts at the new epoch with sequence 0 (a later sequence is out of order)."""
    state = ProducerStateManager()
    append(state, header(0, pid=2, epoch=3, seq=0, count=2, txn=True))
    [done] = end(state, 2, pid=2, kind=COMMIT, epoch=4)
    assert not done.is_aborted and state.ongoing_transactions() == {}
    assert isinstance(refused(state, header(3, pid=2, epoch=3, seq=2, txn=True)), InvalidProducerEpochError)
    assert isinstance(refused(state, header(3, pid=2, epoch=4, seq=2, txn=True)), OutOfOrderSequenceError)
    append(state, header(3, pid=2, epoch=4, seq=0, txn=True))
    assert state.ongoing_transactions() == {3: 2}


def test_t37_a_version_2_marker_must_be_newer_than_the_producers_epoch_unless_it_repeats_the_last() -> None:
    """Kafka's checkProducerEpoch for a transaction version 2 marker: at the producer's current epoch while its
    transaction is open it is refused (a version 0/1 marker passes); once closed, the same marker again is an
    idempotent retry; an older one is refused."""
    state = ProducerStateManager()
    append(state, header(0, pid=2, epoch=3, txn=True))

    def v2_marker(offset: int, epoch: int) -> StorageError | list[CompletedTxn]:
        try:
            staged = state.prepare(
                [(marker_header(offset, pid=2, epoch=epoch), EndTxnMarker(COMMIT, 0))], COORDINATOR, 2
            )
        except StorageError as exc:
            return exc
        return state.commit(staged)

    refused_same = v2_marker(1, 3)
    assert isinstance(refused_same, InvalidProducerEpochError) and "<= the last seen epoch 3 (TV2)" in str(refused_same)
    assert state.prepare([(marker_header(1, pid=2, epoch=3), EndTxnMarker(COMMIT, 0))], COORDINATOR, 0)  # TV0 passes
    [done] = v2_marker(1, 4)
    assert not done.is_aborted
    assert v2_marker(2, 4) == []  # the marker again (a retry after a restart): allowed, completes nothing
    assert isinstance(v2_marker(3, 3), InvalidProducerEpochError)


def test_t69_active_producers_summary() -> None:
    state = ProducerStateManager()
    append(state, header(0, pid=2, epoch=1, seq=0, count=3, txn=True, ts=111))
    append(state, header(3, pid=4, ts=222))
    end(state, 4, pid=4, kind=COMMIT, coord=3)
    assert state.active_producers() == [
        ProducerSummary(2, 1, 2, 111, -1, 0),
        ProducerSummary(4, 0, 0, 2_000, 3, -1),
    ]


def test_replay_rebuilds_the_same_state_without_checks() -> None:
    live = ProducerStateManager()
    replayed = ProducerStateManager()
    steps: list[tuple[BatchHeader, EndTxnMarker | None, AppendOrigin]] = [
        (header(0, pid=2, txn=True), None, CLIENT),
        (header(1, pid=3, txn=True), None, CLIENT),
        (marker_header(2, pid=2), EndTxnMarker(ABORT, 1), COORDINATOR),
        (header(3, pid=2, seq=1, txn=True), None, CLIENT),
    ]
    for h, marker, origin in steps:
        live.commit(live.prepare([(h, marker)], origin))
        replayed.replay(h, marker)
    assert replayed.active_producers() == live.active_producers()
    assert replayed.ongoing_transactions() == live.ongoing_transactions() == {1: 3, 3: 2}
