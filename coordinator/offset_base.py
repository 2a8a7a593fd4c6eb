"""The offset manager's collaborators (Kafka's `OffsetMetadataManager` is built with the `GroupMetadataManager`).

Committed offsets are kept per group (`ClassicGroup.offsets`, with Kafka's pending-write bookkeeping) and reached
through the group manager's public methods: the offset manager validates a commit against the group, creates the
simple (offsets-only) group a generation-less commit needs, and hands the group manager a committing member's
liveness (#27). Pending transactional offsets live beside the committed ones (`GroupOffsets`, T62); the check
that a producer's transaction includes the group is the transaction coordinator's (`TransactionVerifier`).
"""

from __future__ import annotations

from collections.abc import Callable

from coordinator.consumer_group.group import ConsumerGroup
from coordinator.group import ClassicGroup
from coordinator.group_base import ManagerBase, ManagerParts
from coordinator.group_manager import GroupMetadataManager
from coordinator.txn_offsets import OpenTransactionIndex
from protocol.errors import ErrorCode

KnownPartition = Callable[[str, int], bool]
"""The broker's metadata view: does this topic-partition exist? (OffsetCommit's per-partition pre-check, #34)."""
TransactionVerifier = Callable[[str, int, int, str], ErrorCode]
"""(transactional id, producer id, producer epoch, group id) -> NONE when the producer's ongoing transaction
includes the group's `__consumer_offsets` partition (it called AddOffsetsToTxn), else the error TxnOffsetCommit
answers (Kafka answers what its transaction verification answers, e.g. INVALID_TXN_STATE). Called synchronously,
once per TxnOffsetCommit that reaches the group checks (T57)."""


def accept_all_transactions(
    _transactional_id: str, _producer_id: int, _producer_epoch: int, _group_id: str
) -> ErrorCode:
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
