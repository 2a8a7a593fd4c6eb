"""The seam through which Produce asks the transaction coordinator whether a partition is part of a transaction.

Kafka's partition leader verifies the first transactional write of a producer to a partition (KIP-890 part 1,
``transaction.partition.verification.enable``): unless the producer already has a transaction open on that
partition, it asks the coordinator (AddPartitionsToTxn v4+ with VerifyOnly) whether the partition was added to the
producer's ongoing transaction, and refuses the write otherwise, so a hanging transaction cannot be started by a
late or zombie write (T39).

Here the coordinator is in the same process and sans-IO, so the question is a plain call that answers at once, on
the event loop, right before the append: no other write or marker can come between the answer and the append,
which is what Kafka's ``VerificationGuard`` protects against. Until the transaction coordinator installs its
verifier (``Broker.records.verifier``), every transactional write is accepted (:data:`ACCEPT_ALL`).

From Produce v12 (KIP-890 part 2, "transaction version 2") the leader does not only verify: it adds the partitions to
the producer's transaction itself (Kafka's AddPartitionsToTxnManager with VerifyOnly false, whatever
``transaction.partition.verification.enable`` says), since such a producer sends no AddPartitionsToTxn. That add
writes the transaction's state, so it is awaited (:class:`TransactionAdder`, installed as ``Broker.records.adder``);
the verification above still runs right before the append, so nothing can slip between the two.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Protocol

from protocol.errors import ErrorCode

__all__ = ["ACCEPT_ALL", "ADD_NOTHING", "TransactionAdder", "TransactionVerifier", "TxnAdd", "TxnVerification"]


@dataclass(frozen=True, slots=True)
class TxnVerification:
    """One transactional write to verify: a producer's first transactional batch to a partition."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    topic: str
    partition: int
    #: The Produce request's version: the error to answer depends on it in Kafka (TRANSACTION_ABORTABLE for
    #: clients that know it, INVALID_TXN_STATE before).
    produce_version: int


class TransactionVerifier(Protocol):
    """Answers NONE to let the write through, or the Produce error code to answer the partition with."""

    def __call__(self, request: TxnVerification) -> ErrorCode: ...


def _accept_all(request: TxnVerification) -> ErrorCode:
    return ErrorCode.NONE


ACCEPT_ALL: TransactionVerifier = _accept_all


@dataclass(frozen=True, slots=True)
class TxnAdd:
    """The partitions of one Produce v12+ to add to a producer's transaction (those it has no transaction open on)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    partitions: tuple[tuple[str, int], ...]


class TransactionAdder(Protocol):
    """Adds the partitions to the transaction; answers NONE, or the Produce error code for all of them."""

    def __call__(self, request: TxnAdd) -> Awaitable[ErrorCode]: ...


async def _add_nothing(request: TxnAdd) -> ErrorCode:
    return ErrorCode.NONE


ADD_NOTHING: TransactionAdder = _add_nothing
