"""The offset manager's collaborators (Kafka's `OffsetMetadataManager` is built with the `GroupMetadataManager`).

Committed offsets are kept per group (`ClassicGroup.offsets`, with Kafka's pending-write bookkeeping) and reached
through the group manager's public methods: the offset manager validates a commit against the group, creates the
simple (offsets-only) group a generation-less commit needs, and hands the group manager a committing member's
liveness (#27). Pending transactional offsets (KIP-447's `require_stable` on transactions) belong here next.
"""

from __future__ import annotations

from collections.abc import Callable

from coordinator.group_base import ManagerBase, ManagerParts
from coordinator.group_manager import GroupMetadataManager

KnownPartition = Callable[[str, int], bool]
"""The broker's metadata view: does this topic-partition exist? (OffsetCommit's per-partition pre-check, #34)."""


class OffsetManagerBase(ManagerBase):
    """What every part of the offset manager uses; it owns no group state."""

    def __init__(
        self, parts: ManagerParts, group_manager: GroupMetadataManager, known_partition: KnownPartition | None
    ) -> None:
        super().__init__(parts)
        self._group_manager = group_manager
        self._known_partition = known_partition
