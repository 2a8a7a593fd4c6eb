"""The group manager's own state: its groups, member ids and the collaborators it was built with.

`GroupMetadataManager` (group_manager.py) is one manager whose classic-protocol parts live in one file each
(rebalance machinery, JoinGroup, SyncGroup, Heartbeat/LeaveGroup, admin APIs, controls). They all build on this
base, which owns the `groups` dict; nothing outside the manager holds it (the offset manager and the partition
manager go through the manager's public methods). The timer and the time register are shared with the runtime
and the other managers, as Kafka's shard hands one `CoordinatorTimer` and one `Time` to each manager.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from coordinator.config import CoordinatorConfig
from coordinator.consumer_group.group import ConsumerGroup
from coordinator.consumer_group.subscriptions_regex import TopicRegexResolver
from coordinator.consumer_group.topics import StaticTopicCatalog, TopicCatalog
from coordinator.events import Events
from coordinator.group import ClassicGroup
from coordinator.hashing import partition_for
from coordinator.ids import MemberIdGenerator
from coordinator.records import CoordinatorRecord
from coordinator.reply import Reply
from coordinator.result import AppendOutcome, CoordinatorResult
from coordinator.state import GroupState
from coordinator.subscriptions import SubscriptionDecoder, compute_subscribed_topics
from coordinator.time_register import TimeRegister
from coordinator.timer import Timer
from protocol.errors import ErrorCode

Gate = Callable[[str | None, bool], ErrorCode | None]
"""Kafka's `validateGroupStatus` (rule #2), owned by the partition manager: (group id, allow empty id) -> error."""
Write = Callable[[CoordinatorResult[Any]], Reply[Any]]
Reload = Callable[[int, str], None]
"""Reload a partition from its durable log (partition, reason): what a manager asks for when it cannot undo a
failed write in memory (`PartitionManager.reload`)."""
"""The runtime's `write`: the only way records reach the log."""


@dataclass(frozen=True, slots=True)
class ManagerParts:
    """What every manager is built with (Kafka's shard builder hands the same parts to each manager)."""

    config: CoordinatorConfig
    events: Events
    timer: Timer
    time: TimeRegister
    gate: Gate
    write: Write
    reload: Reload
    #: Several nodes share this coordinator: a group in memory may be another node's, so fast paths that skip
    #: the gate for a group they find (Heartbeat) must not.
    gate_always: bool = False


class ManagerBase:
    """Unpacks the shared parts for a manager."""

    def __init__(self, parts: ManagerParts) -> None:
        self._config = parts.config
        self._events = parts.events
        self._timer = parts.timer
        self._time = parts.time
        self._gate_check = parts.gate
        self._gate_always = parts.gate_always
        self._write = parts.write
        self._reload = parts.reload

    def _gate(self, group_id: str | None, *, allow_empty_id: bool) -> ErrorCode | None:
        return self._gate_check(group_id, allow_empty_id)


class GroupManagerBase(ManagerBase):
    """State of the group manager."""

    def __init__(
        self,
        parts: ManagerParts,
        decode_subscription: SubscriptionDecoder | None,
        topics: TopicCatalog | None = None,
    ) -> None:
        super().__init__(parts)
        self._decode_subscription = decode_subscription
        self._ids = MemberIdGenerator(parts.config.member_id_seed)
        self._groups: dict[str, ClassicGroup] = {}
        self._consumer_groups: dict[str, ConsumerGroup] = {}
        """KIP-848 groups. A group id is in at most one of the two maps."""
        self._topics: TopicCatalog = topics if topics is not None else StaticTopicCatalog()
        self._regexes = TopicRegexResolver()

    @property
    def _now_ms(self) -> int:
        return self._time.now_ms

    @property
    def _wall_ms(self) -> int:
        return self._time.wall_ms

    # -- the groups (public to the other managers) -----------------------------------------------------------

    def group(self, group_id: str) -> ClassicGroup | None:
        return self._groups.get(group_id)

    def groups(self) -> list[ClassicGroup]:
        return list(self._groups.values())

    def create_group(self, group_id: str, reason: str) -> ClassicGroup:
        group = ClassicGroup(
            group_id,
            partition_for(group_id, self._config.offsets_topic_num_partitions),
            state_timestamp_ms=self._wall_ms,
        )
        self._groups[group_id] = group
        self._events.group_created(group_id, group.partition, reason)
        return group

    def consumer_group(self, group_id: str) -> ConsumerGroup | None:
        return self._consumer_groups.get(group_id)

    def _live_consumer_group(self, group_id: str) -> ConsumerGroup | None:
        """The consumer group served under `group_id`, or None (no such group, or it is being deleted)."""
        group = self._consumer_groups.get(group_id)
        return None if group is None or group.is_dead else group

    def _consumer_group_not_found(self, group_id: str) -> str:
        """Kafka's GROUP_ID_NOT_FOUND message when a consumer-group API names no live consumer group."""
        if group_id in self._groups:
            return f"Group {group_id} is not a consumer group."
        return f"Group {group_id} not found."

    def consumer_groups(self) -> list[ConsumerGroup]:
        return list(self._consumer_groups.values())

    def create_consumer_group(self, group_id: str, reason: str) -> ConsumerGroup:
        group = ConsumerGroup(
            group_id,
            partition_for(group_id, self._config.offsets_topic_num_partitions),
            state_timestamp_ms=self._wall_ms,
        )
        self._consumer_groups[group_id] = group
        self._events.group_created(group_id, group.partition, reason)
        return group

    def _forget_consumer_group(self, group: ConsumerGroup, reason: str) -> None:
        if self._consumer_groups.get(group.group_id) is group:
            del self._consumer_groups[group.group_id]
            self._events.group_deleted(group.group_id, reason)

    def is_live(self, group: ClassicGroup | ConsumerGroup) -> bool:
        """Whether `group` is still the one served under its id and not Dead (a write's outcome may arrive after
        the group was deleted, unloaded or replaced)."""
        if isinstance(group, ConsumerGroup):
            return self._consumer_groups.get(group.group_id) is group and not group.is_dead
        return self._groups.get(group.group_id) is group and not group.is_in(GroupState.DEAD)

    def forget_group(self, group: ClassicGroup, reason: str) -> None:
        """Drop a Dead group from memory once its tombstones are durable (or were not needed)."""
        if self._groups.get(group.group_id) is group:
            del self._groups[group.group_id]
            self._events.group_deleted(group.group_id, reason)

    def _refresh_subscriptions(self, group: ClassicGroup) -> None:
        group.subscribed_topics = compute_subscribed_topics(group, self._decode_subscription)

    def _append(
        self, partition: int, records: Sequence[CoordinatorRecord], purpose: str, on_done: AppendOutcome
    ) -> None:
        """A write the manager makes on its own (a timer fired, a group emptied): through the runtime."""
        self._write(CoordinatorResult(records, None, partition, purpose, on_done))
