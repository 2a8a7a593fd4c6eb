"""A test context for the coordinator, in the style of Kafka's GroupMetadataManagerTestContext.

* a manual clock; `sleep(ms)` advances it and fires due timers (Kafka's `sleep`), `tick()` fires what is due now;
* after every request the context also fires what is due *now*, like the broker's driver would (it re-arms at
  `next_deadline_ms()`, which may be now): set `auto_tick=False` to look at the state before that;
* request builders with sensible defaults (`join_request`, `sync_request`, ...) and senders that take either a
  built request or builder keywords (`join(group_id="g", member_id=...)`);
* compound steps: `join_dynamic` (handles MEMBER_ID_REQUIRED), `join_with_n_members` (a Stable group of n);
* timer assertions by key (`heartbeat_deadline`, `assert_heartbeat_deadline`, `join_deadline`, `sync_deadline`);
* recorded events (`events.names()`, `events.of("member.expired")`).

Tests default to `group.initial.rebalance.delay.ms=0` (Kafka's own harness does too) and a deterministic
member-id seed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from coordinator.clock import ManualClock
from coordinator.config import CoordinatorConfig
from coordinator.context import RequestContext
from coordinator.coordinator import GroupCoordinator
from coordinator.events import Events
from coordinator.group import ClassicGroup
from coordinator.keys import heartbeat_key, join_key, sync_key
from coordinator.persistence import InMemoryRecordStore
from coordinator.reply import Reply
from coordinator.state import GroupState
from protocol.consumer_protocol import decode_subscription, encode_subscription
from protocol.errors import ErrorCode
from protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from protocol.messages.delete_groups import DeleteGroupsRequest, DeleteGroupsResponse
from protocol.messages.describe_groups import DescribedGroup, DescribeGroupsRequest
from protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol, JoinGroupResponse
from protocol.messages.leave_group import LeaveGroupRequest, LeaveGroupResponse, MemberIdentity
from protocol.messages.list_groups import ListGroupsRequest, ListGroupsResponse
from protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
    OffsetCommitResponse,
)
from protocol.messages.offset_delete import (
    OffsetDeleteRequest,
    OffsetDeleteRequestPartition,
    OffsetDeleteRequestTopic,
    OffsetDeleteResponse,
)
from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestTopic, OffsetFetchResponse
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment, SyncGroupResponse
from protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
    TxnOffsetCommitResponse,
)

LATEST = {
    "join": 9,
    "sync": 5,
    "heartbeat": 4,
    "leave": 5,
    "commit": 9,
    "fetch": 7,
    "describe": 6,
    "list": 5,
    "delete": 3,
    "offset_delete": 0,
    "txn_commit": 4,
}


def subscription(*topics: str) -> bytes:
    """A real ConsumerProtocol subscription blob (what a Java consumer sends as JoinGroup metadata)."""
    return encode_subscription(ConsumerProtocolSubscription(topics=list(topics)))


class EventRecorder:
    """Collects coordinator events (name, fields) instead of logging them."""

    def __init__(self) -> None:
        self.records: list[tuple[str, dict[str, Any]]] = []

    def info(self, event: str, **kw: Any) -> None:
        self.records.append((event, kw))

    def warning(self, event: str, **kw: Any) -> None:
        self.records.append((event, kw))

    def debug(self, event: str, **kw: Any) -> None:
        self.records.append((event, kw))

    def names(self) -> list[str]:
        return [name for name, _ in self.records]

    def of(self, name: str) -> list[dict[str, Any]]:
        return [kw for n, kw in self.records if n == name]

    def clear(self) -> None:
        self.records.clear()


@dataclass
class JoinedGroup:
    """A Stable group built by `join_with_n_members`."""

    group_id: str
    member_ids: list[str]
    leader_id: str
    generation_id: int
    instance_ids: dict[str, str | None] = field(default_factory=dict)

    @property
    def followers(self) -> list[str]:
        return [m for m in self.member_ids if m != self.leader_id]


class CoordinatorTestContext:
    """A coordinator on a manual clock with an in-memory log, plus builders and assertions."""

    def __init__(
        self,
        *,
        initial_rebalance_delay_ms: int = 0,
        partitions: Iterable[int] | None = None,
        auto_durable: bool = True,
        auto_tick: bool = True,
        start_ms: int = 0,
        seed: int | None = 0,
        store: InMemoryRecordStore | None = None,
        decode: bool = True,
        known_partition: Any = None,
        topics: Any = None,
        verify_transaction: Any = None,
        serves: Any = None,
        **config: Any,
    ) -> None:
        config.setdefault("group_initial_rebalance_delay_ms", initial_rebalance_delay_ms)
        config.setdefault("member_id_seed", seed)
        self.config = CoordinatorConfig(**config)
        self.clock = ManualClock(start_ms)
        self.store = store if store is not None else InMemoryRecordStore(auto_durable=auto_durable)
        self.events = EventRecorder()
        self.auto_tick = auto_tick
        self.coordinator = GroupCoordinator(
            self.config,
            self.store,
            events=Events(self.events),
            decode_subscription=decode_subscription if decode else None,
            known_partition=known_partition,
            topics=topics,
            verify_transaction=verify_transaction,
            serves=serves,
        )
        owned = range(self.config.offsets_topic_num_partitions) if partitions is None else partitions
        for partition in owned:
            self.coordinator.load_partition(partition, self.store.records(partition), self.now_ms, self.clock.wall_ms())
        self.events.clear()

    # -- time ------------------------------------------------------------------------------------------------

    @property
    def now_ms(self) -> int:
        return self.clock.monotonic_ms()

    @property
    def wall_ms(self) -> int:
        return self.clock.wall_ms()

    def sleep(self, ms: int) -> int:
        """Advance the clock by `ms`, firing every timer at its own deadline on the way (as a broker that is
        never late would), so operations that schedule relative to "now" see the right time; returns how many
        timers fired."""
        target = self.now_ms + ms
        fired = 0
        while (deadline := self.coordinator.next_deadline_ms()) is not None and deadline <= target:
            self.clock.advance(max(deadline - self.now_ms, 0))
            fired += self.tick()
        self.clock.advance(target - self.now_ms)
        return fired + self.tick()

    def advance(self, ms: int) -> None:
        """Move the clock without firing timers: the next request arrives at the same instant as a deadline and
        is handled before it (the broker's driver runs due timers after the request in hand)."""
        self.clock.advance(ms)

    def sleep_until(self, at_ms: int) -> int:
        return self.sleep(at_ms - self.now_ms)

    def tick(self) -> int:
        return self.coordinator.tick(self.now_ms, self.wall_ms)

    def load_reloads(self) -> list[int]:
        """Load, from the in-memory log, the partitions the coordinator unloaded to reload (what the broker does
        with `take_reloads`); returns them."""
        partitions = self.coordinator.take_reloads()
        for partition in partitions:
            self.coordinator.load_partition(partition, self.store.records(partition), self.now_ms, self.wall_ms)
        return partitions

    def _after(self) -> None:
        if self.auto_tick:
            self.tick()

    def ctx(self, api_version: int, client_id: str = "consumer", client_host: str = "/127.0.0.1") -> RequestContext:
        return RequestContext(
            api_version=api_version, client_id=client_id, client_host=client_host, wall_ms=self.wall_ms
        )

    # -- builders --------------------------------------------------------------------------------------------

    @staticmethod
    def join_request(
        group_id: str = "group",
        member_id: str = "",
        *,
        group_instance_id: str | None = None,
        session_timeout_ms: int = 10_000,
        rebalance_timeout_ms: int = 10_000,
        protocol_type: str = "consumer",
        protocols: Sequence[tuple[str, bytes]] | None = None,
        topics: Sequence[str] = ("topic",),
        reason: str | None = None,
    ) -> JoinGroupRequest:
        if protocols is None:
            protocols = [("range", subscription(*topics))]
        return JoinGroupRequest(
            group_id=group_id,
            member_id=member_id,
            group_instance_id=group_instance_id,
            session_timeout_ms=session_timeout_ms,
            rebalance_timeout_ms=rebalance_timeout_ms,
            protocol_type=protocol_type,
            protocols=[JoinGroupRequestProtocol(name=n, metadata=m) for n, m in protocols],
            reason=reason,
        )

    @staticmethod
    def sync_request(
        group_id: str,
        member_id: str,
        generation_id: int,
        *,
        group_instance_id: str | None = None,
        assignments: dict[str, bytes] | None = None,
        protocol_type: str | None = "consumer",
        protocol_name: str | None = "range",
    ) -> SyncGroupRequest:
        return SyncGroupRequest(
            group_id=group_id,
            member_id=member_id,
            generation_id=generation_id,
            group_instance_id=group_instance_id,
            protocol_type=protocol_type,
            protocol_name=protocol_name,
            assignments=[SyncGroupRequestAssignment(member_id=m, assignment=a) for m, a in (assignments or {}).items()],
        )

    @staticmethod
    def commit_request(
        group_id: str,
        offsets: dict[tuple[str, int], int] | None = None,
        *,
        member_id: str = "",
        generation_id: int = -1,
        group_instance_id: str | None = None,
        metadata: str | None = "",
        leader_epoch: int = -1,
        retention_time_ms: int = -1,
    ) -> OffsetCommitRequest:
        topics: dict[str, list[OffsetCommitRequestPartition]] = {}
        for (topic, partition), offset in (offsets or {("topic", 0): 1}).items():
            topics.setdefault(topic, []).append(
                OffsetCommitRequestPartition(
                    partition_index=partition,
                    committed_offset=offset,
                    committed_metadata=metadata,
                    committed_leader_epoch=leader_epoch,
                )
            )
        return OffsetCommitRequest(
            group_id=group_id,
            generation_id_or_member_epoch=generation_id,
            member_id=member_id,
            group_instance_id=group_instance_id,
            retention_time_ms=retention_time_ms,
            topics=[OffsetCommitRequestTopic(name=t, partitions=ps) for t, ps in topics.items()],
        )

    @staticmethod
    def txn_commit_request(
        group_id: str = "group",
        offsets: dict[tuple[str, int], int] | None = None,
        *,
        producer_id: int = 1000,
        producer_epoch: int = 0,
        transactional_id: str = "txn",
        member_id: str = "",
        generation_id: int = -1,
        group_instance_id: str | None = None,
        metadata: str | None = "",
        leader_epoch: int = -1,
    ) -> TxnOffsetCommitRequest:
        topics: dict[str, list[TxnOffsetCommitRequestPartition]] = {}
        for (topic, partition), offset in (offsets or {("topic", 0): 1}).items():
            topics.setdefault(topic, []).append(
                TxnOffsetCommitRequestPartition(
                    partition_index=partition,
                    committed_offset=offset,
                    committed_metadata=metadata,
                    committed_leader_epoch=leader_epoch,
                )
            )
        return TxnOffsetCommitRequest(
            transactional_id=transactional_id,
            group_id=group_id,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            generation_id_or_member_epoch=generation_id,
            member_id=member_id,
            group_instance_id=group_instance_id,
            topics=[TxnOffsetCommitRequestTopic(name=t, partitions=ps) for t, ps in topics.items()],
        )

    # -- senders ---------------------------------------------------------------------------------------------

    def join(
        self,
        request: JoinGroupRequest | None = None,
        *,
        version: int = LATEST["join"],
        client_id: str = "consumer",
        **kw: Any,
    ) -> Reply[JoinGroupResponse]:
        request = request if request is not None else self.join_request(**kw)
        reply = self.coordinator.join_group(self.ctx(version, client_id), request, self.now_ms)
        self._after()
        return reply

    def sync(
        self, request: SyncGroupRequest | None = None, *, version: int = LATEST["sync"], **kw: Any
    ) -> Reply[SyncGroupResponse]:
        request = request if request is not None else self.sync_request(**kw)
        reply = self.coordinator.sync_group(self.ctx(version), request, self.now_ms)
        self._after()
        return reply

    def heartbeat(
        self,
        group_id: str,
        member_id: str,
        generation_id: int,
        *,
        group_instance_id: str | None = None,
        version: int = LATEST["heartbeat"],
    ) -> ErrorCode:
        response = self.coordinator.heartbeat(
            self.ctx(version),
            HeartbeatRequest(
                group_id=group_id, member_id=member_id, generation_id=generation_id, group_instance_id=group_instance_id
            ),
            self.now_ms,
        )
        self._after()
        return ErrorCode(response.error_code)

    def heartbeat_response(self, request: HeartbeatRequest, version: int = LATEST["heartbeat"]) -> HeartbeatResponse:
        response = self.coordinator.heartbeat(self.ctx(version), request, self.now_ms)
        self._after()
        return response

    def leave(
        self, group_id: str, *members: tuple[str, str | None], version: int = LATEST["leave"], reason: str | None = None
    ) -> LeaveGroupResponse:
        if version < 3:
            assert len(members) == 1
            request = LeaveGroupRequest(group_id=group_id, member_id=members[0][0])
        else:
            request = LeaveGroupRequest(
                group_id=group_id,
                members=[MemberIdentity(member_id=m, group_instance_id=i, reason=reason) for m, i in members],
            )
        reply = self.coordinator.leave_group(self.ctx(version), request, self.now_ms)
        self._after()
        return reply.value

    def commit(
        self, request: OffsetCommitRequest | None = None, *, version: int = LATEST["commit"], **kw: Any
    ) -> Reply[OffsetCommitResponse]:
        request = request if request is not None else self.commit_request(**kw)
        reply = self.coordinator.offset_commit(self.ctx(version), request, self.now_ms)
        self._after()
        return reply

    def commit_errors(self, reply: Reply[OffsetCommitResponse]) -> dict[tuple[str, int], ErrorCode]:
        return {(t.name, p.partition_index): ErrorCode(p.error_code) for t in reply.value.topics for p in t.partitions}

    def txn_commit(
        self, request: TxnOffsetCommitRequest | None = None, *, version: int = LATEST["txn_commit"], **kw: Any
    ) -> Reply[TxnOffsetCommitResponse]:
        request = request if request is not None else self.txn_commit_request(**kw)
        reply = self.coordinator.txn_offset_commit(self.ctx(version), request, self.now_ms)
        self._after()
        return reply

    def txn_errors(self, reply: Reply[TxnOffsetCommitResponse]) -> dict[tuple[str, int], ErrorCode]:
        return {(t.name, p.partition_index): ErrorCode(p.error_code) for t in reply.value.topics for p in t.partitions}

    def complete_txn(
        self,
        producer_id: int,
        commit: bool,
        *,
        group_id: str = "group",
        partition: int | None = None,
        producer_epoch: int = 0,
        coordinator_epoch: int = 0,
    ) -> Reply[ErrorCode]:
        """The marker the broker writes for a WriteTxnMarkers naming `group_id`'s `__consumer_offsets` partition."""
        if partition is None:
            partition = self.coordinator.partition_for(group_id)
        reply = self.coordinator.complete_transaction(
            partition, producer_id, producer_epoch, coordinator_epoch, commit, self.now_ms, self.wall_ms
        )
        self._after()
        return reply

    def fetch(
        self,
        group_id: str,
        topics: dict[str, list[int]] | None = None,
        *,
        version: int = LATEST["fetch"],
        require_stable: bool = False,
    ) -> OffsetFetchResponse:
        request = OffsetFetchRequest(
            group_id=group_id,
            topics=None
            if topics is None
            else [OffsetFetchRequestTopic(name=t, partition_indexes=p) for t, p in topics.items()],
            require_stable=require_stable,
        )
        response = self.coordinator.offset_fetch(self.ctx(version), request, self.now_ms)
        self._after()
        return response

    def fetched(
        self, group_id: str, topics: dict[str, list[int]] | None = None, **kw: Any
    ) -> dict[tuple[str, int], tuple[int, int, str | None, ErrorCode]]:
        """(topic, partition) -> (offset, leader epoch, metadata, error) for a v2-v7 fetch."""
        response = self.fetch(group_id, topics, **kw)
        assert response.error_code == ErrorCode.NONE, ErrorCode(response.error_code)
        return {
            (t.name, p.partition_index): (
                p.committed_offset,
                p.committed_leader_epoch,
                p.metadata,
                ErrorCode(p.error_code),
            )
            for t in response.topics
            for p in t.partitions
        }

    def committed_offset(self, group_id: str, topic: str = "topic", partition: int = 0) -> int:
        return self.fetched(group_id, {topic: [partition]})[(topic, partition)][0]

    def describe(self, *group_ids: str, version: int = LATEST["describe"]) -> list[DescribedGroup]:
        response = self.coordinator.describe_groups(
            self.ctx(version), DescribeGroupsRequest(groups=list(group_ids)), self.now_ms
        )
        self._after()
        return response.groups

    def list_groups(
        self, states: Sequence[str] = (), types: Sequence[str] = (), version: int = LATEST["list"]
    ) -> ListGroupsResponse:
        response = self.coordinator.list_groups(
            self.ctx(version), ListGroupsRequest(states_filter=list(states), types_filter=list(types)), self.now_ms
        )
        self._after()
        return response

    def delete_groups(self, *group_ids: str, version: int = LATEST["delete"]) -> Reply[DeleteGroupsResponse]:
        reply = self.coordinator.delete_groups(
            self.ctx(version), DeleteGroupsRequest(groups_names=list(group_ids)), self.now_ms
        )
        self._after()
        return reply

    def offset_delete(self, group_id: str, topics: dict[str, list[int]]) -> Reply[OffsetDeleteResponse]:
        request = OffsetDeleteRequest(
            group_id=group_id,
            topics=[
                OffsetDeleteRequestTopic(
                    name=t, partitions=[OffsetDeleteRequestPartition(partition_index=p) for p in ps]
                )
                for t, ps in topics.items()
            ],
        )
        reply = self.coordinator.offset_delete(self.ctx(LATEST["offset_delete"]), request, self.now_ms)
        self._after()
        return reply

    # -- compound steps --------------------------------------------------------------------------------------

    def join_dynamic(
        self, group_id: str = "group", *, version: int = LATEST["join"], **kw: Any
    ) -> Reply[JoinGroupResponse]:
        """A new dynamic member joins; on v4+ it first collects its member id (MEMBER_ID_REQUIRED)."""
        reply = self.join(group_id=group_id, version=version, **kw)
        if reply.done and reply.value.error_code == ErrorCode.MEMBER_ID_REQUIRED:
            kw.pop("member_id", None)
            reply = self.join(group_id=group_id, member_id=reply.value.member_id, version=version, **kw)
        return reply

    def join_with_n_members(
        self,
        group_id: str,
        n: int,
        *,
        static: bool = False,
        session_timeout_ms: int = 10_000,
        rebalance_timeout_ms: int = 10_000,
        version: int = LATEST["join"],
        topics: Sequence[str] = ("topic",),
    ) -> JoinedGroup:
        """Build a Stable group of `n` members (the leader assigns b"assignment-<i>" to member i)."""
        replies: list[Reply[JoinGroupResponse]] = []
        instance_ids: list[str | None] = []
        saved_auto_tick, self.auto_tick = self.auto_tick, False
        try:
            for i in range(n):
                instance_id = f"instance-{i}" if static else None
                instance_ids.append(instance_id)
                replies.append(
                    self.join_dynamic(
                        group_id,
                        version=version,
                        group_instance_id=instance_id,
                        session_timeout_ms=session_timeout_ms,
                        rebalance_timeout_ms=rebalance_timeout_ms,
                        topics=topics,
                    )
                )
        finally:
            self.auto_tick = saved_auto_tick
        if not all(r.done for r in replies):
            self.sleep(self.config.group_initial_rebalance_delay_ms)
        assert all(r.done for r in replies), "join did not complete"
        responses = [r.value for r in replies]
        assert all(r.error_code == ErrorCode.NONE for r in responses), [ErrorCode(r.error_code) for r in responses]
        generation = responses[0].generation_id
        leader = responses[0].leader
        member_ids = [r.member_id for r in responses]
        leader_response = next(r for r in responses if r.member_id == leader)
        assignment = {
            m.member_id: f"assignment-{member_ids.index(m.member_id)}".encode() for m in leader_response.members
        }
        syncs = [
            self.sync(
                group_id=group_id,
                member_id=m,
                generation_id=generation,
                group_instance_id=instance_ids[i],
                assignments=assignment if m == leader else None,
            )
            for i, m in enumerate(member_ids)
        ]
        assert all(s.done and s.value.error_code == ErrorCode.NONE for s in syncs)
        assert self.state(group_id) is GroupState.STABLE
        return JoinedGroup(group_id, member_ids, leader, generation, dict(zip(member_ids, instance_ids, strict=True)))

    # -- inspection and assertions ---------------------------------------------------------------------------

    def group(self, group_id: str) -> ClassicGroup:
        group = self.coordinator.group(group_id)
        assert group is not None, f"no group {group_id!r}"
        return group

    def state(self, group_id: str) -> GroupState | None:
        group = self.coordinator.group(group_id)
        return None if group is None else group.state

    def heartbeat_deadline(self, group_id: str, member_id: str) -> int | None:
        return self.coordinator.timer.deadline(heartbeat_key(group_id, member_id))

    def assert_heartbeat_deadline(self, group_id: str, member_id: str, expected_ms: int) -> None:
        actual = self.heartbeat_deadline(group_id, member_id)
        assert actual == expected_ms, f"heartbeat deadline of {member_id}: {actual} != {expected_ms}"

    def join_deadline(self, group_id: str) -> int | None:
        return self.coordinator.timer.deadline(join_key(group_id))

    def sync_deadline(self, group_id: str) -> int | None:
        return self.coordinator.timer.deadline(sync_key(group_id))


def dead_group(ctx: CoordinatorTestContext, group_id: str = "dead") -> None:
    """A group caught between DeleteGroups and the durability of its tombstones: Dead, still in memory."""
    ctx.commit(group_id=group_id)
    ctx.store.auto_durable = False
    ctx.delete_groups(group_id)
    assert ctx.state(group_id) is GroupState.DEAD


def completing(ctx: CoordinatorTestContext, n: int = 2, group_id: str = "g") -> tuple[list[str], str, int]:
    """A group of n members that just got their JoinGroup responses (CompletingRebalance)."""
    ctx.auto_tick = False
    replies = [ctx.join_dynamic(group_id) for _ in range(n)]
    ctx.auto_tick = True
    ctx.tick()
    assert ctx.state(group_id) is GroupState.COMPLETING_REBALANCE
    return [r.value.member_id for r in replies], replies[0].value.leader, replies[0].value.generation_id
