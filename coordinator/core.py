"""The coordinator's shared state and plumbing: time register, ownership and gating, timer keys, appends.

`GroupCoordinator` is assembled from one mixin per concern (rebalance machinery, JoinGroup, SyncGroup,
Heartbeat/LeaveGroup, offsets, admin APIs, partition loading), all built on this base, so each file stays about
one job while sharing one set of groups, one timer and one clock register.

Time: every entry point stores its `now_ms` (monotonic) and wall-clock reading here before doing anything, and
timer operations read them, the way Kafka's managers read `time.milliseconds()`. `now_ms` must never go
backwards. Wall-clock time is only used for what Kafka persists (commit and state timestamps) and for retention.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from coordinator.config import CoordinatorConfig
from coordinator.events import Events
from coordinator.group import ClassicGroup
from coordinator.hashing import partition_for
from coordinator.ids import MemberIdGenerator
from coordinator.persistence import RecordLog
from coordinator.records import CoordinatorRecord
from coordinator.subscriptions import SubscriptionDecoder, compute_subscribed_topics
from coordinator.timer import Timer
from protocol.errors import ErrorCode

KnownPartition = Callable[[str, int], bool]
"""The broker's metadata view: does this topic-partition exist? (OffsetCommit's per-partition pre-check, #34)."""

RETENTION_KEY: Hashable = ("retention",)


def heartbeat_key(group_id: str, member_id: str) -> Hashable:
    """Session expiry of a member, or expiry of a pending (MEMBER_ID_REQUIRED) member id."""
    return ("heartbeat", group_id, member_id)


def join_key(group_id: str) -> Hashable:
    """The delayed join: rebalance timeout, or the initial rebalance delay of an Empty group."""
    return ("join", group_id)


def sync_key(group_id: str) -> Hashable:
    """The pending-sync timeout: members that got a JoinGroup response must send SyncGroup in time (#24)."""
    return ("sync", group_id)


def append_key(token: int) -> Hashable:
    """The `offsets.commit.timeout.ms` guard of one in-flight append."""
    return ("append", token)


class PartitionStatus(enum.Enum):
    LOADING = "loading"
    ACTIVE = "active"
    #: The load could not finish (Kafka's CoordinatorState.FAILED): not active, so NOT_COORDINATOR.
    FAILED = "failed"


@dataclass(slots=True)
class _InflightAppend:
    partition: int
    purpose: str
    on_done: Callable[[ErrorCode], None]


class CoordinatorCore:
    """State shared by every part of the coordinator."""

    def __init__(
        self,
        config: CoordinatorConfig,
        store: RecordLog,
        *,
        events: Events | None = None,
        decode_subscription: SubscriptionDecoder | None = None,
        known_partition: KnownPartition | None = None,
    ) -> None:
        self._config = config
        self._store = store
        self._events = events if events is not None else Events()
        self._decode_subscription = decode_subscription
        self._known_partition = known_partition
        self._timer = Timer()
        self._ids = MemberIdGenerator(config.member_id_seed)
        self._groups: dict[str, ClassicGroup] = {}
        self._partitions: dict[int, PartitionStatus] = {}
        self._load_failures: dict[int, str] = {}
        self._active = True
        self._inflight: dict[int, _InflightAppend] = {}
        self._next_token = 0
        self._now_ms = 0
        self._wall_ms = 0
        self._wall_offset_ms = 0

    # -- public read-only views ------------------------------------------------------------------------------

    @property
    def config(self) -> CoordinatorConfig:
        return self._config

    @property
    def timer(self) -> Timer:
        """The purgatory, for inspection (tests assert deadlines by key); only the coordinator schedules."""
        return self._timer

    def group(self, group_id: str) -> ClassicGroup | None:
        """The group's live metadata, for inspection only (tests, the simulator's invariants)."""
        return self._groups.get(group_id)

    def groups(self) -> list[ClassicGroup]:
        return list(self._groups.values())

    def partition_for(self, group_id: str) -> int:
        """Rule #1: the `__consumer_offsets` partition (and so the coordinator) of `group_id`."""
        return partition_for(group_id, self._config.offsets_topic_num_partitions)

    def owned_partitions(self) -> dict[int, str]:
        return {p: s.value for p, s in sorted(self._partitions.items())}

    def load_failures(self) -> dict[int, str]:
        """Why each FAILED partition could not be loaded."""
        return dict(sorted(self._load_failures.items()))

    @property
    def now_ms(self) -> int:
        return self._now_ms

    # -- time ------------------------------------------------------------------------------------------------

    def _advance(self, now_ms: int, wall_ms: int | None) -> None:
        """Record the caller's clock readings; without a wall reading, extrapolate from the last one."""
        assert now_ms >= self._now_ms, f"monotonic time went backwards: {now_ms} < {self._now_ms}"
        self._now_ms = now_ms
        if wall_ms is None:
            self._wall_ms = now_ms + self._wall_offset_ms
        else:
            self._wall_ms = wall_ms
            self._wall_offset_ms = wall_ms - now_ms

    # -- ownership and gating (rule #2) ----------------------------------------------------------------------

    def _gate(self, group_id: str | None, *, allow_empty_id: bool) -> ErrorCode | None:
        """Kafka's `validateGroupStatus`: invalid id, inactive coordinator, partition loading, not the owner."""
        if group_id is None or (not group_id and not allow_empty_id):
            return ErrorCode.INVALID_GROUP_ID
        if not self._active:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        status = self._partitions.get(self.partition_for(group_id))
        if status is None or status is PartitionStatus.FAILED:
            return ErrorCode.NOT_COORDINATOR
        if status is PartitionStatus.LOADING:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        return None

    def _create_group(self, group_id: str, reason: str) -> ClassicGroup:
        group = ClassicGroup(group_id, self.partition_for(group_id), state_timestamp_ms=self._wall_ms)
        self._groups[group_id] = group
        self._events.group_created(group_id, group.partition, reason)
        return group

    def _forget_group(self, group: ClassicGroup, reason: str) -> None:
        """Drop a Dead group from memory once its tombstones are durable (or were not needed)."""
        if self._groups.get(group.group_id) is group:
            del self._groups[group.group_id]
            self._events.group_deleted(group.group_id, reason)

    def _refresh_subscriptions(self, group: ClassicGroup) -> None:
        group.subscribed_topics = compute_subscribed_topics(group, self._decode_subscription)

    # -- persistence -----------------------------------------------------------------------------------------

    def _append(
        self, partition: int, records: Sequence[CoordinatorRecord], purpose: str, on_done: Callable[[ErrorCode], None]
    ) -> None:
        """Write records, then call `on_done(error)` exactly once: NONE when durable, else the failure.

        Always the last step of an operation: an in-memory log may call back before `append` returns. A write
        that is not durable within offsets.commit.timeout.ms fails with REQUEST_TIMED_OUT (a later durability
        notice for it is ignored, as Kafka ignores a produce that completes after its timeout). Unloading the
        partition fails in-flight writes with NOT_LEADER_OR_FOLLOWER.
        """
        token = self._next_token
        self._next_token += 1
        self._inflight[token] = _InflightAppend(partition, purpose, on_done)

        def durable(error: ErrorCode) -> None:
            self._finish_append(token, error)

        self._store.append(partition, records, durable)
        if token in self._inflight:
            self._timer.schedule(
                append_key(token),
                self._now_ms + self._config.offsets_commit_timeout_ms,
                lambda: self._finish_append(token, ErrorCode.REQUEST_TIMED_OUT),
            )

    def _finish_append(self, token: int, error: ErrorCode) -> None:
        inflight = self._inflight.pop(token, None)
        if inflight is None:
            return
        self._timer.cancel(append_key(token))
        if error != ErrorCode.NONE:
            self._events.append_failed(inflight.partition, inflight.purpose, error.name)
        inflight.on_done(error)

    def _fail_inflight_appends(self, partition: int, error: ErrorCode) -> None:
        for token in [t for t, a in self._inflight.items() if a.partition == partition]:
            self._finish_append(token, error)
