"""Owning `__consumer_offsets` partitions: loading them (#46), unloading them (#47), shutting down.

A coordinator answers only for groups whose partition it owns and has loaded (NOT_COORDINATOR otherwise,
COORDINATOR_LOAD_IN_PROGRESS while loading, #2). Several coordinators can therefore share one process, one per
broker node, each owning the partitions its node leads; moving a partition is `unload_partition` on one and
`load_partition` on the other, with the same records.

Loading replays the records (`loader.py`), gives every member a fresh session deadline (so members that died
with the old coordinator expire), and forces a rebalance of groups loaded over group.max.size. Unloading marks the
partition's groups Dead and answers everything parked with NOT_COORDINATOR, so clients look the coordinator up
again.

A load that cannot finish (the records cannot be read, or replaying them fails) leaves the partition FAILED, as
Kafka's CoordinatorRuntime does: not active, so its groups answer NOT_COORDINATOR (never LOAD_IN_PROGRESS
forever), nothing half-loaded stays in memory, the reason is logged once and kept for the control API. Other
partitions are not affected. `begin_loading` may try again.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable

from coordinator.config import CoordinatorConfig
from coordinator.events import Events
from coordinator.group_manager import GroupMetadataManager
from coordinator.hashing import partition_for
from coordinator.loader import replay
from coordinator.offset_manager import OffsetMetadataManager
from coordinator.records import LogEntry
from coordinator.runtime import CoordinatorRuntime
from protocol.errors import ErrorCode

#: Whether the node answering the current request leads a partition of the coordinator's topic
#: (`__consumer_offsets`, or `__transaction_state` for the transaction coordinator; several-node clusters).
Serves = Callable[[int], bool]


class PartitionStatus(enum.Enum):
    LOADING = "loading"
    ACTIVE = "active"
    #: The load could not finish (Kafka's CoordinatorState.FAILED): not active, so NOT_COORDINATOR.
    FAILED = "failed"


class PartitionTable:
    """Which partitions this coordinator owns and in which state; the request gate (rule #2)."""

    __slots__ = ("_active", "_config", "_failures", "_serves", "_statuses")

    def __init__(self, config: CoordinatorConfig, serves: Serves | None = None) -> None:
        self._config = config
        self._statuses: dict[int, PartitionStatus] = {}
        self._failures: dict[int, str] = {}
        self._active = True
        self._serves = serves

    def gate(self, group_id: str | None, allow_empty_id: bool) -> ErrorCode | None:
        """Kafka's `validateGroupStatus`: invalid id, inactive coordinator, not the owner, partition loading.

        In a several-node cluster one coordinator holds the partitions of every node, and `serves` says whether
        the node the request came to leads the group's partition: when it does not, the answer is NOT_COORDINATOR
        before anything else, as a Kafka node that is not the leader has no state for the partition at all."""
        if group_id is None or (not group_id and not allow_empty_id):
            return ErrorCode.INVALID_GROUP_ID
        partition = partition_for(group_id, self._config.offsets_topic_num_partitions)
        if self._serves is not None and self._active and not self._serves(partition):
            return ErrorCode.NOT_COORDINATOR
        return self.partition_gate(partition)

    def lists(self, group_id: str) -> bool:
        """Whether ListGroups, asked of the requesting node, lists this group (its partition is the node's)."""
        return self._serves is None or self._serves(partition_for(group_id, self._config.offsets_topic_num_partitions))

    def partition_gate(self, partition: int) -> ErrorCode | None:
        """The same check for one partition (a transaction marker names the partition, not a group)."""
        if not self._active:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        status = self._statuses.get(partition)
        if status is None or status is PartitionStatus.FAILED:
            return ErrorCode.NOT_COORDINATOR
        if status is PartitionStatus.LOADING:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        return None

    def listing_error(self) -> ErrorCode:
        """ListGroups' error (#41): not available once shut down, LOAD_IN_PROGRESS while any partition (of the
        requesting node) loads."""
        if not self._active:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        serves = self._serves
        if any(s is PartitionStatus.LOADING and (serves is None or serves(p)) for p, s in self._statuses.items()):
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        return ErrorCode.NONE

    def status(self, partition: int) -> PartitionStatus | None:
        return self._statuses.get(partition)

    def partitions(self) -> list[int]:
        return list(self._statuses)

    def mark(self, partition: int, status: PartitionStatus, failure: str | None = None) -> None:
        """Record `partition`'s new status; a failure reason is kept only while it is FAILED."""
        self._statuses[partition] = status
        if failure is None:
            self._failures.pop(partition, None)
        else:
            self._failures[partition] = failure

    def forget(self, partition: int) -> bool:
        """No longer owned; False if it was not."""
        self._failures.pop(partition, None)
        return self._statuses.pop(partition, None) is not None

    def deactivate(self) -> None:
        self._active = False

    def owned(self) -> dict[int, str]:
        return {p: s.value for p, s in sorted(self._statuses.items())}

    def failures(self) -> dict[int, str]:
        return dict(sorted(self._failures.items()))


class PartitionManager:
    """Begin, finish, fail and undo the loading of `__consumer_offsets` partitions."""

    __slots__ = ("_config", "_events", "_groups", "_offsets", "_reloads", "_runtime", "_table")

    def __init__(
        self,
        config: CoordinatorConfig,
        events: Events,
        table: PartitionTable,
        groups: GroupMetadataManager,
        offsets: OffsetMetadataManager,
        runtime: CoordinatorRuntime,
    ) -> None:
        self._config = config
        self._events = events
        self._table = table
        self._groups = groups
        self._offsets = offsets
        self._runtime = runtime
        self._reloads: list[int] = []

    def begin_loading(self, partition: int) -> None:
        """This coordinator became leader of `partition`; its groups answer COORDINATOR_LOAD_IN_PROGRESS until
        `load_partition` is called."""
        self._check_partition(partition)
        status = self._table.status(partition)
        if status is not None and status is not PartitionStatus.FAILED:
            raise ValueError(f"partition {partition} is already {status.value}")
        self._table.mark(partition, PartitionStatus.LOADING)
        self._events.partition_loading(partition)

    def load_partition(self, partition: int, records: Iterable[LogEntry]) -> bool:
        """Replay `partition`'s records and start serving its groups; False (and FAILED) when that cannot finish.

        `records` may be a lazy reader: an exception from it, or from the replay, fails the load of this
        partition only.
        """
        self._check_partition(partition)
        if self._table.status(partition) is PartitionStatus.ACTIVE:
            raise ValueError(f"partition {partition} is already loaded")
        try:
            loaded = replay(partition, records, self._events)
            self._table.mark(partition, PartitionStatus.ACTIVE)
            self._groups.install(loaded.groups)
            self._groups.install_consumer_groups(loaded.consumer_groups)
            self._offsets.index_transactions(partition, [*loaded.groups.values(), *loaded.consumer_groups.values()])
            self._offsets.start_retention()
            groups = len(loaded.groups) + len(loaded.consumer_groups)
            self._events.partition_loaded(partition, groups, loaded.records, loaded.skipped)
        except Exception as exc:
            self.fail_loading(partition, repr(exc))
            return False
        return True

    def fail_loading(self, partition: int, reason: str) -> None:
        """The load of `partition` cannot finish: drop whatever it installed, answer NOT_COORDINATOR from now on."""
        self._check_partition(partition)
        self._drop(partition)
        self._table.mark(partition, PartitionStatus.FAILED, reason)
        self._events.partition_load_failed(partition, reason)

    def unload_partition(self, partition: int) -> None:
        """This coordinator lost `partition`: its groups go Dead, parked replies get NOT_COORDINATOR."""
        if not self._table.forget(partition):
            return
        doomed = self._drop(partition)
        if not self._table.partitions():
            self._offsets.stop_retention()
        self._events.partition_unloaded(partition, doomed)

    def reload(self, partition: int, reason: str) -> None:
        """Memory no longer matches the log of `partition` and cannot be undone in place (a failed write had later
        writes built on it, some of which may be durable): unload it and load it again from what was written,
        which is the truth, as Kafka's runtime reverts a shard to its last committed offset. The partition answers
        COORDINATOR_LOAD_IN_PROGRESS until whoever feeds records (the broker, a test) takes it from
        `take_reloads` and calls `load_partition`."""
        if self._table.status(partition) is not PartitionStatus.ACTIVE:
            return
        self._events.partition_reload(partition, reason)
        self.unload_partition(partition)
        self.begin_loading(partition)
        self._reloads.append(partition)

    def take_reloads(self) -> list[int]:
        """The partitions `reload` unloaded that wait for their records, oldest first (and forget them)."""
        reloads, self._reloads = self._reloads, []
        return reloads

    def shutdown(self) -> None:
        """Unload everything and answer COORDINATOR_NOT_AVAILABLE from now on."""
        for partition in self._table.partitions():
            self.unload_partition(partition)
        self._table.deactivate()

    def _drop(self, partition: int) -> int:
        doomed = self._groups.drop_partition(partition)
        self._offsets.forget_transactions(partition)
        self._runtime.fail_partition(partition, ErrorCode.NOT_LEADER_OR_FOLLOWER)
        return doomed

    def _check_partition(self, partition: int) -> None:
        if not 0 <= partition < self._config.offsets_topic_num_partitions:
            raise ValueError(f"partition {partition} outside 0..{self._config.offsets_topic_num_partitions - 1}")
