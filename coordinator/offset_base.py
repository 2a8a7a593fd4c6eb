"""The offset manager's collaborators (Kafka's `OffsetMetadataManager` is built with the `GroupMetadataManager`).

Committed offsets are kept per group (`ClassicGroup.offsets`, with Kafka's pending-write bookkeeping) and reached
through the group manager's public methods: the offset manager validates a commit against the group, creates the
simple (offsets-only) group a generation-less commit needs, and hands the group manager a committing member's
liveness (#27). Pending transactional offsets live beside the committed ones (`GroupOffsets`, T62); the check
that a producer's transaction includes the group is the transaction coordinator's (`TransactionVerifier`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from coordinator.consumer_group.group import ConsumerGroup
from coordinator.group import ClassicGroup
from coordinator.group_base import ManagerBase, ManagerParts
from coordinator.group_manager import GroupMetadataManager
from coordinator.txn_offsets import OpenTransactionIndex
from protocol.errors import ErrorCode

KnownPartition = Callable[[str, int], bool]
"""The broker's metadata view: does this topic-partition exist? (OffsetCommit's per-partition pre-check, #34)."""


@dataclass(frozen=True, slots=True)
class TxnOffsetVerification:
    """One TxnOffsetCommit to verify with the transaction coordinator (T57): did the producer's ongoing
    transaction add the group's `__consumer_offsets` partition (AddOffsetsToTxn)?"""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    group_id: str
    partition: int
    """The group's `__consumer_offsets` partition, the one AddOffsetsToTxn adds to the transaction."""
    api_version: int
    """The TxnOffsetCommit version: Kafka's answer depends on it (TRANSACTION_ABORTABLE is known from v4)."""


TransactionVerifier = Callable[[TxnOffsetVerification], ErrorCode]
"""NONE when the producer's ongoing transaction includes the group's partition, else the error TxnOffsetCommit
answers for every partition (what Kafka's transaction verification answers, e.g. INVALID_TXN_STATE). Called
synchronously, once per TxnOffsetCommit that passed the partition's state checks, before the group checks."""


def accept_all_transactions(_request: TxnOffsetVerification) -> ErrorCode:
    """The default `TransactionVerifier`: without a transaction coordinator wired in, every transaction is taken
    to include the group."""
    return ErrorCode.NONE


class OffsetManagerBase(ManagerBase):
    """What every part of the offset manager uses; it owns no group state."""

    def __init__(
        self,
        parts: ManagerParts,
        group_manager: GroupMetadataManager,
        known_partition: KnownPartition | None,
        verify_transaction: TransactionVerifier | None = None,
    ) -> None:
        super().__init__(parts)
        self._group_manager = group_manager
        self._known_partition = known_partition
        self._verify_transaction = verify_transaction or accept_all_transactions
        self._open_transactions = OpenTransactionIndex()

    def _live_group(self, group_id: str) -> ClassicGroup | ConsumerGroup | None:
        """The group served under `group_id` (either type), if it is live."""
        manager = self._group_manager
        group: ClassicGroup | ConsumerGroup | None = manager.consumer_group(group_id) or manager.group(group_id)
        return group if group is not None and manager.is_live(group) else None
