"""The offset retention sweep (KIP-211, #36), run every offsets.retention.check.interval.ms.

Which offsets may expire depends on the group (Kafka's `offsetExpirationCondition`):

* Empty group with a protocol type: every offset, once retention has passed since the group became Empty (the
  persisted state timestamp; the commit timestamp when that is unknown);
* Stable "consumer" group whose subscriptions are known: offsets of topics nobody subscribes to, by commit time;
* simple group (no protocol type): by commit time;
* any other group: none.

An explicit expire timestamp (OffsetCommit v2-v4) overrides the rule; offsets whose write is in flight never
expire. Expired offsets are tombstoned; an Empty group left with no offsets becomes Dead and is removed (with a
group-metadata tombstone, as Kafka 4.4 writes even for a group that never wrote a group record).
"""

from __future__ import annotations

from collections.abc import Callable

from coordinator.group import ClassicGroup
from coordinator.keys import RETENTION_KEY
from coordinator.offset_base import OffsetManagerBase
from coordinator.offsets import OffsetAndMetadata, TopicPartition
from coordinator.records import CoordinatorRecord, offset_commit_tombstone
from coordinator.result import CoordinatorResult
from coordinator.state import GroupState
from protocol.errors import ErrorCode


def _commit_time(value: OffsetAndMetadata) -> int:
    return value.commit_timestamp_ms


def _nothing_subscribed(_topic: str) -> bool:
    return False


class RetentionMixin(OffsetManagerBase):
    """The periodic sweep."""

    def start_retention(self) -> None:
        """Arm the sweep (a partition was loaded), unless it already is."""
        if not self._timer.contains(RETENTION_KEY):
            self._schedule_retention()

    def stop_retention(self) -> None:
        """No partition is owned any more."""
        self._timer.cancel(RETENTION_KEY)

    def _schedule_retention(self) -> None:
        self._timer.schedule(
            RETENTION_KEY, self._time.now_ms + self._config.offsets_retention_check_interval_ms, self.run_retention
        )

    def run_retention(self) -> None:
        """One sweep (the timer runs it every offsets.retention.check.interval.ms; tests may run it now)."""
        self._schedule_retention()
        for group in self._group_manager.groups():
            if not group.is_in(GroupState.DEAD):
                self._expire_group_offsets(group)

    def _expired_offsets(self, group: ClassicGroup) -> list[TopicPartition]:
        base: Callable[[OffsetAndMetadata], int]
        is_subscribed: Callable[[str], bool] = _nothing_subscribed
        if group.protocol_type is None:
            base = _commit_time
        elif group.is_in(GroupState.EMPTY):
            state_ms = group.state_timestamp_ms
            base = _commit_time if state_ms is None else (lambda _value: state_ms)
        elif group.uses_consumer_protocol and group.subscribed_topics is not None and group.is_in(GroupState.STABLE):
            base = _commit_time
            subscribed = group.subscribed_topics
            is_subscribed = subscribed.__contains__
        else:
            return []
        return group.offsets.expired(self._time.wall_ms, self._config.offsets_retention_ms, base, is_subscribed)

    def _expire_group_offsets(self, group: ClassicGroup) -> None:
        expired = self._expired_offsets(group)
        records: list[CoordinatorRecord] = [offset_commit_tombstone(group.group_id, t, p) for t, p in expired]
        for t, p in expired:
            group.offsets.delete(t, p)
        if expired:
            self._events.offsets_expired(group.group_id, expired)
        removable = group.is_in(GroupState.EMPTY) and not group.offsets.has_offsets()
        if removable:
            records.extend(self._group_manager.kill_group(group))

        def done(_error: ErrorCode) -> None:
            # Kafka does not wait for (or retry) these tombstones: a lost one is rewritten by a later sweep
            # after a reload, so a failure changes nothing here.
            if removable:
                self._group_manager.forget_group(group, "offsets expired and the group is empty")

        if records or removable:
            self._write(CoordinatorResult(records, None, group.partition, "offset expiration", done))
