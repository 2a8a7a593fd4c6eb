"""Transaction states and their metadata transitions (T12-T14, T20, T21, T25, T32), below the coordinator."""

from __future__ import annotations

import pytest

from coordinator.transactions.metadata import IllegalTransitionError, TransactionMetadata
from coordinator.transactions.state import TransactionState as S
from protocol.errors import ErrorCode

NOW = 1_700_000_000_000


def metadata(state: S = S.EMPTY, epoch: int = 5, **kw: object) -> TransactionMetadata:
    txn = TransactionMetadata("t", producer_id=100, producer_epoch=epoch, timeout_ms=60_000, state=state)
    for name, value in kw.items():
        setattr(txn, name, value)
    return txn


def test_t20_state_ids_and_names_are_kafkas() -> None:
    assert [(s.value, s.state_name) for s in S] == [
        (0, "Empty"),
        (1, "Ongoing"),
        (2, "PrepareCommit"),
        (3, "PrepareAbort"),
        (4, "CompleteCommit"),
        (5, "CompleteAbort"),
        (6, "Dead"),
        (7, "PrepareEpochFence"),
    ]
    assert S.from_id(3) is S.PREPARE_ABORT and S.from_id(8) is None
    assert S.from_name("PrepareCommit") is S.PREPARE_COMMIT and S.from_name("prepare_commit") is None


def test_t21_valid_previous_states_are_kafkas() -> None:
    complete = {S.COMPLETE_COMMIT, S.COMPLETE_ABORT}
    assert {s: s.valid_previous_states for s in S} == {
        S.EMPTY: {S.EMPTY, *complete},
        S.ONGOING: {S.ONGOING, S.EMPTY, *complete},
        S.PREPARE_COMMIT: {S.ONGOING},
        S.PREPARE_ABORT: {S.ONGOING, S.PREPARE_EPOCH_FENCE, S.EMPTY, *complete},
        S.COMPLETE_COMMIT: {S.PREPARE_COMMIT},
        S.COMPLETE_ABORT: {S.PREPARE_ABORT},
        S.DEAD: {S.EMPTY, *complete},
        S.PREPARE_EPOCH_FENCE: {S.ONGOING},
    }


def test_t21_expiration_is_allowed_only_when_no_transaction_is_open() -> None:
    assert {s for s in S if s.expiration_allowed} == {S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}


def test_t21_an_illegal_transition_is_a_bug_not_a_client_error() -> None:
    with pytest.raises(IllegalTransitionError):
        metadata(S.EMPTY).prepare_abort_or_commit(S.PREPARE_COMMIT, NOW)
    with pytest.raises(IllegalTransitionError):
        metadata(S.PREPARE_COMMIT).prepare_add_partitions({("t", 0)}, NOW)


def test_t21_a_second_transition_while_one_is_pending_is_a_bug() -> None:
    txn = metadata(S.EMPTY)
    txn.prepare_increment_producer_epoch(60_000, None, NOW)
    assert txn.pending_state is S.EMPTY
    with pytest.raises(IllegalTransitionError):
        txn.prepare_add_partitions({("t", 0)}, NOW)


def test_t12_epoch_bump_without_expected_epoch() -> None:
    txn = metadata(S.COMPLETE_COMMIT, epoch=5, last_producer_epoch=4)
    transit = txn.prepare_increment_producer_epoch(30_000, None, NOW)
    assert not isinstance(transit, ErrorCode)
    assert (transit.producer_id, transit.producer_epoch, transit.last_producer_epoch) == (100, 6, -1)
    assert (transit.state, transit.partitions, transit.start_timestamp_ms) == (S.EMPTY, frozenset(), -1)
    assert (transit.timeout_ms, transit.last_update_timestamp_ms, transit.previous_producer_id) == (30_000, NOW, 100)


def test_t13_expected_epoch_equal_to_current_bumps_and_remembers_it() -> None:
    transit = metadata(S.EMPTY, epoch=5).prepare_increment_producer_epoch(60_000, 5, NOW)
    assert not isinstance(transit, ErrorCode)
    assert (transit.producer_epoch, transit.last_producer_epoch) == (6, 5)


def test_t13_expected_epoch_equal_to_the_last_one_is_a_retry_without_bump() -> None:
    transit = metadata(S.EMPTY, epoch=6, last_producer_epoch=5).prepare_increment_producer_epoch(60_000, 5, NOW)
    assert not isinstance(transit, ErrorCode)
    assert (transit.producer_epoch, transit.last_producer_epoch) == (6, 5)


def test_t13_any_other_expected_epoch_is_fenced_and_leaves_no_pending_state() -> None:
    txn = metadata(S.EMPTY, epoch=6, last_producer_epoch=5)
    assert txn.prepare_increment_producer_epoch(60_000, 3, NOW) is ErrorCode.PRODUCER_FENCED
    assert txn.pending_state is None


def test_t9_a_new_producer_starts_at_epoch_0() -> None:
    transit = metadata(S.EMPTY, epoch=-1).prepare_increment_producer_epoch(60_000, 17, NOW)
    assert not isinstance(transit, ErrorCode)
    assert (transit.producer_epoch, transit.last_producer_epoch) == (0, -1)


def test_t12_rotation_starts_a_new_producer_id_at_epoch_0() -> None:
    txn = metadata(S.COMPLETE_ABORT, epoch=32766)
    assert txn.is_producer_epoch_exhausted
    transit = txn.prepare_producer_id_rotation(200, 60_000, NOW, record_last_epoch=True)
    assert (transit.producer_id, transit.previous_producer_id, transit.producer_epoch) == (200, 100, 0)
    assert transit.last_producer_epoch == 32766
    txn.pending_state = None
    assert txn.prepare_producer_id_rotation(200, 60_000, NOW, record_last_epoch=False).last_producer_epoch == -1


def test_t14_fencing_bumps_the_epoch_once() -> None:
    transit = metadata(S.ONGOING, epoch=5).prepare_fence_producer_epoch()
    assert (transit.state, transit.producer_epoch) == (S.PREPARE_EPOCH_FENCE, 6)
    after_failure = metadata(S.ONGOING, epoch=6, has_failed_epoch_fence=True).prepare_fence_producer_epoch()
    assert after_failure.producer_epoch == 6
    at_max = metadata(S.ONGOING, epoch=32767).prepare_fence_producer_epoch()
    assert at_max.producer_epoch == 32767


def test_t25_adding_partitions_begins_a_transaction_at_now() -> None:
    txn = metadata(S.COMPLETE_COMMIT)
    transit = txn.prepare_add_partitions({("a", 0), ("b", 1)}, NOW)
    assert (transit.state, transit.start_timestamp_ms) == (S.ONGOING, NOW)
    txn.complete_transition(transit)
    later = txn.prepare_add_partitions({("a", 1)}, NOW + 5)
    assert later.partitions == {("a", 0), ("a", 1), ("b", 1)}
    assert (later.start_timestamp_ms, later.last_update_timestamp_ms) == (NOW, NOW + 5)


def test_t32_completion_clears_the_partitions_and_keeps_the_start_time() -> None:
    txn = metadata(S.PREPARE_COMMIT, partitions={("a", 0)}, start_timestamp_ms=NOW)
    transit = txn.prepare_complete(NOW + 10)
    assert (transit.state, transit.partitions, transit.start_timestamp_ms) == (S.COMPLETE_COMMIT, frozenset(), NOW)
    assert txn.complete_transition(transit) is S.PREPARE_COMMIT
    assert (txn.state, txn.partitions, txn.pending_state) == (S.COMPLETE_COMMIT, set(), None)
    abort = metadata(S.PREPARE_ABORT, partitions={("a", 0)}, start_timestamp_ms=NOW).prepare_complete(NOW)
    assert abort.state is S.COMPLETE_ABORT


def test_t21_completing_a_transition_that_was_not_prepared_is_a_bug() -> None:
    txn = metadata(S.EMPTY)
    transit = txn.prepare_increment_producer_epoch(60_000, None, NOW)
    txn.pending_state = None
    with pytest.raises(IllegalTransitionError):
        txn.complete_transition(transit)


def test_t48_dead_is_prepared_only_from_states_without_a_transaction() -> None:
    assert metadata(S.COMPLETE_ABORT).prepare_dead().state is S.DEAD
    with pytest.raises(IllegalTransitionError):
        metadata(S.ONGOING).prepare_dead()
