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

from collections.abc import Iterable

from coordinator.core import RETENTION_KEY, PartitionStatus, heartbeat_key, join_key, sync_key
from coordinator.loader import LoadedPartition, replay
from coordinator.rebalance import RebalanceMixin
from coordinator.records import CoordinatorRecord
from coordinator.retention import RetentionMixin
from coordinator.state import GroupState
from protocol.errors import ErrorCode
from protocol.messages.join_group import JoinGroupResponse
from protocol.messages.sync_group import SyncGroupResponse


class PartitionsMixin(RetentionMixin, RebalanceMixin):
    """Partition ownership."""

    def begin_loading(self, partition: int) -> None:
        """This coordinator became leader of `partition`; its groups answer COORDINATOR_LOAD_IN_PROGRESS until
        `load_partition` is called."""
        self._check_partition(partition)
        if self._partitions.get(partition, PartitionStatus.FAILED) is not PartitionStatus.FAILED:
            raise ValueError(f"partition {partition} is already {self._partitions[partition].value}")
        self._partitions[partition] = PartitionStatus.LOADING
        self._events.partition_loading(partition)

    def load_partition(
        self, partition: int, records: Iterable[CoordinatorRecord], now_ms: int, wall_ms: int | None = None
    ) -> bool:
        """Replay `partition`'s records and start serving its groups; False (and FAILED) when that cannot finish.

        `records` may be a lazy reader: an exception from it, or from the replay, fails the load of this
        partition only.
        """
        self._advance(now_ms, wall_ms)
        self._check_partition(partition)
        if self._partitions.get(partition) is PartitionStatus.ACTIVE:
            raise ValueError(f"partition {partition} is already loaded")
        try:
            self._install(partition, replay(partition, records, self._events))
        except Exception as exc:
            self.fail_loading(partition, repr(exc), now_ms, wall_ms)
            return False
        return True

    def _install(self, partition: int, loaded: LoadedPartition) -> None:
        self._partitions[partition] = PartitionStatus.ACTIVE
        self._load_failures.pop(partition, None)
        for group_id, group in loaded.groups.items():
            self._groups[group_id] = group
            self._refresh_subscriptions(group)
            for member in group.members.values():
                self._arm_member(group, member)
                self._reschedule_heartbeat(member)
            self._events.group_loaded(
                group_id, group.state.value, group.generation_id, len(group.members), len(group.offsets)
            )
            if len(group.members) > self._config.group_max_size:
                self._prepare_rebalance(
                    group,
                    f"freshly-loaded group is over capacity ({len(group.members)} > {self._config.group_max_size})",
                )
        if not self._timer.contains(RETENTION_KEY):
            self._schedule_retention()
        self._events.partition_loaded(partition, len(loaded.groups), loaded.records, loaded.skipped)

    def fail_loading(self, partition: int, reason: str, now_ms: int, wall_ms: int | None = None) -> None:
        """The load of `partition` cannot finish: drop whatever it installed, answer NOT_COORDINATOR from now on."""
        self._advance(now_ms, wall_ms)
        self._check_partition(partition)
        self._drop_groups(partition)
        self._partitions[partition] = PartitionStatus.FAILED
        self._load_failures[partition] = reason
        self._events.partition_load_failed(partition, reason)

    def unload_partition(self, partition: int, now_ms: int, wall_ms: int | None = None) -> None:
        """This coordinator lost `partition`: its groups go Dead, parked replies get NOT_COORDINATOR."""
        self._advance(now_ms, wall_ms)
        if self._partitions.pop(partition, None) is None:
            return
        self._load_failures.pop(partition, None)
        doomed = self._drop_groups(partition)
        if not self._partitions:
            self._timer.cancel(RETENTION_KEY)
        self._events.partition_unloaded(partition, doomed)

    def _drop_groups(self, partition: int) -> int:
        """Mark `partition`'s groups Dead, answer their parked requests and in-flight writes; how many there were."""
        doomed = [g for g in self._groups.values() if g.partition == partition]
        for group in doomed:
            group_id = group.group_id
            old = group.state
            if old is not GroupState.DEAD:
                group.transition_to(GroupState.DEAD, self._wall_ms)
            for member in list(group.members.values()):
                group.complete_join(
                    member, JoinGroupResponse(error_code=ErrorCode.NOT_COORDINATOR, member_id=member.member_id)
                )
                group.complete_sync(member, SyncGroupResponse(error_code=ErrorCode.NOT_COORDINATOR))
                self._timer.cancel(member.heartbeat_key)
            for member_id in group.pending_members:
                self._timer.cancel(heartbeat_key(group_id, member_id))
            self._timer.cancel(join_key(group_id))
            self._timer.cancel(sync_key(group_id))
            del self._groups[group_id]
            self._events.group_unloaded(group_id, old.value, group.generation_id)
        self._fail_inflight_appends(partition, ErrorCode.NOT_LEADER_OR_FOLLOWER)
        return len(doomed)

    def shutdown(self, now_ms: int, wall_ms: int | None = None) -> None:
        """Unload everything and answer COORDINATOR_NOT_AVAILABLE from now on."""
        for partition in list(self._partitions):
            self.unload_partition(partition, now_ms, wall_ms)
        self._active = False

    def _check_partition(self, partition: int) -> None:
        if not 0 <= partition < self._config.offsets_topic_num_partitions:
            raise ValueError(f"partition {partition} outside 0..{self._config.offsets_topic_num_partitions - 1}")
