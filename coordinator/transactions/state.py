"""The states of a transactional id (Kafka's `TransactionState`, rules T20 and T21).

Each state is stored in `__transaction_state` as its id (`TransactionStatus`, an int8) and shown by
DescribeTransactions / ListTransactions under its name. `valid_previous_states` is Kafka's transition table: a
transition from any other state is a coordinator bug (Kafka throws IllegalStateException), never a client error;
client-visible refusals (INVALID_TXN_STATE, CONCURRENT_TRANSACTIONS, ...) are decided before a transition is
prepared. PrepareAbort's predecessors Empty, CompleteCommit and CompleteAbort are only used by transaction version
2 (an EndTxn v5 abort without a transaction, which still bumps the epoch, T73).

    Empty ──AddPartitions──▶ Ongoing ──EndTxn──▶ PrepareCommit ──markers──▶ CompleteCommit
      ▲                        │   └──EndTxn/timeout/fence──▶ PrepareAbort ──markers──▶ CompleteAbort
      └──InitProducerId────────┼──(from Empty/Complete*)                         (PrepareEpochFence: pending only)
                               └──InitProducerId while Ongoing──▶ PrepareEpochFence ──▶ PrepareAbort
    Empty/Complete* ──transactional.id.expiration.ms──▶ Dead (a tombstone; the id is forgotten)
"""

from __future__ import annotations

import enum


class TransactionState(enum.Enum):
    """A transactional id's state; the value is the id Kafka stores (`TransactionStatus`)."""

    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def state_name(self) -> str:
        """The name DescribeTransactions and ListTransactions use ("Empty", "PrepareCommit", ...)."""
        return _NAMES[self]

    @property
    def valid_previous_states(self) -> frozenset[TransactionState]:
        return _VALID_PREVIOUS[self]

    @property
    def expiration_allowed(self) -> bool:
        """Whether an idle transactional id in this state may expire (no transaction is open, T48)."""
        return self in _EXPIRATION_ALLOWED

    @property
    def is_prepare(self) -> bool:
        """PrepareCommit or PrepareAbort: the outcome is decided and its markers are being written."""
        return self in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT)

    @classmethod
    def from_id(cls, state_id: int) -> TransactionState | None:
        try:
            return cls(state_id)
        except ValueError:
            return None

    @classmethod
    def from_name(cls, name: str) -> TransactionState | None:
        """The state a ListTransactions state filter names, or None (echoed as an unknown filter, T68)."""
        return _BY_NAME.get(name)


_S = TransactionState
_NAMES = {
    _S.EMPTY: "Empty",
    _S.ONGOING: "Ongoing",
    _S.PREPARE_COMMIT: "PrepareCommit",
    _S.PREPARE_ABORT: "PrepareAbort",
    _S.COMPLETE_COMMIT: "CompleteCommit",
    _S.COMPLETE_ABORT: "CompleteAbort",
    _S.DEAD: "Dead",
    _S.PREPARE_EPOCH_FENCE: "PrepareEpochFence",
}
_BY_NAME = {name: state for state, name in _NAMES.items()}
_EXPIRATION_ALLOWED = frozenset({_S.EMPTY, _S.COMPLETE_COMMIT, _S.COMPLETE_ABORT})
_VALID_PREVIOUS: dict[TransactionState, frozenset[TransactionState]] = {
    _S.EMPTY: frozenset({_S.EMPTY, _S.COMPLETE_COMMIT, _S.COMPLETE_ABORT}),
    _S.ONGOING: frozenset({_S.ONGOING, _S.EMPTY, _S.COMPLETE_COMMIT, _S.COMPLETE_ABORT}),
    _S.PREPARE_COMMIT: frozenset({_S.ONGOING}),
    _S.PREPARE_ABORT: frozenset({_S.ONGOING, _S.PREPARE_EPOCH_FENCE, _S.EMPTY, _S.COMPLETE_COMMIT, _S.COMPLETE_ABORT}),
    _S.COMPLETE_COMMIT: frozenset({_S.PREPARE_COMMIT}),
    _S.COMPLETE_ABORT: frozenset({_S.PREPARE_ABORT}),
    _S.DEAD: frozenset({_S.EMPTY, _S.COMPLETE_ABORT, _S.COMPLETE_COMMIT}),
    _S.PREPARE_EPOCH_FENCE: frozenset({_S.ONGOING}),
}
