"""The owned `__transaction_state` partitions and the metadata of their transactional ids (Kafka's
`transactionMetadataCache` with its loading set, T1, T3).

A transactional id lives in partition `abs(javaHash(id)) % transaction.state.log.num.partitions` (the same hashing
as groups, `coordinator/hashing.py`). Every lookup is Kafka's `getTransactionState`: COORDINATOR_NOT_AVAILABLE
once shut down, COORDINATOR_LOAD_IN_PROGRESS while the partition loads, NOT_COORDINATOR when it is not owned (or
its load failed), else the id's metadata or None. A partition's status reuses the group coordinator's
`PartitionStatus`; the coordinator epoch (the partition's leader epoch when it was loaded) goes into every marker.

In a several-node cluster one cache holds the partitions of every node. A client's request is looked up with the
`serves` predicate of the node it came to (`coordinator.partitions.Serves`): NOT_COORDINATOR, right after the
shut-down check, for a partition that node does not lead, as a Kafka node that is not the leader has no state for
it. The broker's own lookups (a partition leader verifying a produce, markers, timeouts, expiration) pass none.
"""

from __future__ import annotations

from collections.abc import Iterator

from coordinator.hashing import partition_for
from coordinator.partitions import PartitionStatus, Serves
from coordinator.transactions.metadata import TransactionMetadata
from protocol.errors import ErrorCode

Lookup = TransactionMetadata | None | ErrorCode
"""A lookup's outcome: the metadata, None for an unknown id, or the coordinator's error for the id."""


class TransactionCache:
    """Partition ownership and the cached metadata per owned, loaded partition."""

    __slots__ = ("_active", "_epochs", "_failures", "_num_partitions", "_statuses", "_transactions")

    def __init__(self, num_partitions: int) -> None:
        self._num_partitions = num_partitions
        self._statuses: dict[int, PartitionStatus] = {}
        self._transactions: dict[int, dict[str, TransactionMetadata]] = {}
        self._epochs: dict[int, int] = {}
        self._failures: dict[int, str] = {}
        self._active = True

    def partition_for(self, transactional_id: str) -> int:
        return partition_for(transactional_id, self._num_partitions)

    # -- lookups ---------------------------------------------------------------------------------------------

    def partition_error(self, partition: int, serves: Serves | None = None) -> ErrorCode | None:
        """Kafka's `getTransactionState` errors for `partition`, asked of the node `serves` describes (None: the
        broker itself, which may ask about any node's partition)."""
        if not self._active:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if serves is not None and not serves(partition):
            return ErrorCode.NOT_COORDINATOR
        status = self._statuses.get(partition)
        if status is PartitionStatus.LOADING:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        if status is not PartitionStatus.ACTIVE:
            return ErrorCode.NOT_COORDINATOR
        return None

    def lookup(self, transactional_id: str, serves: Serves | None = None) -> Lookup:
        """The id's metadata, None, or the error for it (`partition_error`, with the asking node's `serves`)."""
        partition = self.partition_for(transactional_id)
        error = self.partition_error(partition, serves)
        if error is not None:
            return error
        return self._transactions[partition].get(transactional_id)

    def put_if_absent(self, metadata: TransactionMetadata) -> TransactionMetadata:
        """Cache a new id's metadata (before its first write, as Kafka does); the cached one if there is one."""
        cache = self._transactions[self.partition_for(metadata.transactional_id)]
        return cache.setdefault(metadata.transactional_id, metadata)

    def is_current(self, metadata: TransactionMetadata) -> bool:
        """Whether `metadata` is still the cached metadata of its id: its partition was not unloaded (or
        reloaded) and the id did not expire meanwhile. Kafka compares coordinator epochs for this."""
        return self.lookup(metadata.transactional_id) is metadata

    def remove(self, metadata: TransactionMetadata) -> None:
        cache = self._transactions.get(self.partition_for(metadata.transactional_id), {})
        if cache.get(metadata.transactional_id) is metadata:
            del cache[metadata.transactional_id]

    def coordinator_epoch(self, partition: int) -> int:
        return self._epochs.get(partition, 0)

    def transactions(self, partition: int) -> list[TransactionMetadata]:
        """The ids of one loaded partition (empty if it is not loaded)."""
        return list(self._transactions.get(partition, {}).values())

    def all_transactions(self, serves: Serves | None = None) -> Iterator[TransactionMetadata]:
        """Every id of every loaded partition (that the asking node leads: `serves`), in partition order."""
        for partition in sorted(self._transactions):
            if serves is None or serves(partition):
                yield from list(self._transactions[partition].values())

    # -- ownership -------------------------------------------------------------------------------------------

    def status(self, partition: int) -> PartitionStatus | None:
        return self._statuses.get(partition)

    def any_loading(self, serves: Serves | None = None) -> bool:
        """Whether a partition (that the asking node leads: `serves`) is loading."""
        return any(s is PartitionStatus.LOADING and (serves is None or serves(p)) for p, s in self._statuses.items())

    @property
    def active(self) -> bool:
        return self._active

    def mark_loading(self, partition: int) -> None:
        self._statuses[partition] = PartitionStatus.LOADING
        self._failures.pop(partition, None)

    def activate(self, partition: int, transactions: dict[str, TransactionMetadata], coordinator_epoch: int) -> None:
        self._statuses[partition] = PartitionStatus.ACTIVE
        self._transactions[partition] = transactions
        self._epochs[partition] = coordinator_epoch

    def mark_failed(self, partition: int, reason: str) -> None:
        self._transactions.pop(partition, None)
        self._statuses[partition] = PartitionStatus.FAILED
        self._failures[partition] = reason

    def forget(self, partition: int) -> int | None:
        """No longer owned: its ids leave the cache. Returns how many there were, None if it was not owned."""
        if self._statuses.pop(partition, None) is None:
            return None
        self._failures.pop(partition, None)
        self._epochs.pop(partition, None)
        return len(self._transactions.pop(partition, {}))

    def partitions(self) -> list[int]:
        return sorted(self._statuses)

    def deactivate(self) -> None:
        self._active = False

    def check_partition(self, partition: int) -> None:
        if not 0 <= partition < self._num_partitions:
            raise ValueError(f"partition {partition} outside 0..{self._num_partitions - 1}")

    def owned(self) -> dict[int, str]:
        return {p: s.value for p, s in sorted(self._statuses.items())}

    def failures(self) -> dict[int, str]:
        return dict(sorted(self._failures.items()))
