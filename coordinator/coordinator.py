"""`GroupCoordinator`: Kafka's group coordinator (classic and KIP-848 consumer groups) as a synchronous, sans-IO
state machine.

How to drive it (the broker's job, sketched in architecture.md 4.4):

* call an API method with the request context, the decoded request dataclass and `now_ms` (monotonic). Reads
  (Heartbeat, OffsetFetch, DescribeGroups, ListGroups, ConsumerGroupDescribe) return the response; operations that
  can wait (JoinGroup, SyncGroup, LeaveGroup, ConsumerGroupHeartbeat, OffsetCommit, TxnOffsetCommit, DeleteGroups,
  OffsetDelete) return a `Reply`, possibly already completed;
* when a transaction that committed offsets ends, the broker (WriteTxnMarkers) calls `complete_transaction` for
  each `__consumer_offsets` partition it names: the coordinator writes the marker and settles the offsets;
* after every call (and after delivering a storage durability notice) read `next_deadline_ms()` and arrange for
  `tick(now_ms)` to run at that time; `tick` fires every due timer (delayed joins, session expiry, pending-sync
  expiry, the initial rebalance delay, retention, write timeouts);
* own partitions with `begin_loading` / `load_partition` / `unload_partition`; `shutdown` at the end. A load that
  cannot finish leaves its partition FAILED (`fail_loading`, NOT_COORDINATOR), as Kafka's runtime does.

No method does I/O, reads a clock, sleeps, or creates an asyncio object; the same instance runs under the test
harness's manual clock and under the broker's event loop.

This file is the coordinator's whole public API. It is a façade over the parts it builds, as Kafka's
`GroupCoordinatorShard.Builder.build()` composes its managers (architecture.md Decision 7):

* `GroupMetadataManager` (group_manager.py): groups and the classic protocol;
* `OffsetMetadataManager` (offset_manager.py): commits, transactional commits and their markers, fetches,
  deletes, retention;
* `PartitionTable` / `PartitionManager` (partitions.py): ownership, the request gate, loading;
* `CoordinatorRuntime` (runtime.py): the only writer; it appends each operation's `CoordinatorResult`, waits,
  applies offsets.commit.timeout.ms and maps a failed write to the request's error.

Each method records the caller's clock readings, then delegates in a line or two.
"""

from __future__ import annotations

from collections.abc import Iterable

from coordinator.config import CoordinatorConfig
from coordinator.consumer_group.group import ConsumerGroup
from coordinator.consumer_group.topics import TopicCatalog
from coordinator.consumer_group.views import ConsumerMemberView
from coordinator.context import RequestContext
from coordinator.controls import MemberView
from coordinator.driven import TimerDriven
from coordinator.events import Events
from coordinator.group import ClassicGroup
from coordinator.group_base import ManagerParts
from coordinator.group_manager import GroupMetadataManager
from coordinator.hashing import partition_for
from coordinator.offset_base import KnownPartition, TransactionVerifier
from coordinator.offset_manager import OffsetMetadataManager
from coordinator.partitions import PartitionManager, PartitionTable, Serves
from coordinator.persistence import RecordLog
from coordinator.records import LogEntry, TransactionMarker
from coordinator.reply import Reply
from coordinator.runtime import CoordinatorRuntime
from coordinator.subscriptions import SubscriptionDecoder
from coordinator.time_register import TimeRegister
from coordinator.timer import Timer
from protocol.errors import ErrorCode
from protocol.messages.consumer_group_describe import ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse
from protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from protocol.messages.delete_groups import DeleteGroupsRequest, DeleteGroupsResponse
from protocol.messages.describe_groups import DescribeGroupsRequest, DescribeGroupsResponse
from protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from protocol.messages.join_group import JoinGroupRequest, JoinGroupResponse
from protocol.messages.leave_group import LeaveGroupRequest, LeaveGroupResponse
from protocol.messages.list_groups import ListGroupsRequest, ListGroupsResponse
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitResponse
from protocol.messages.offset_delete import OffsetDeleteRequest, OffsetDeleteResponse
from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchResponse
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse
from protocol.messages.txn_offset_commit import TxnOffsetCommitRequest, TxnOffsetCommitResponse


class GroupCoordinator(TimerDriven):
    """The group coordinator of one broker node (the partitions of `__consumer_offsets` it leads)."""

    def __init__(
        self,
        config: CoordinatorConfig,
        store: RecordLog,
        *,
        events: Events | None = None,
        decode_subscription: SubscriptionDecoder | None = None,
        known_partition: KnownPartition | None = None,
        topics: TopicCatalog | None = None,
        verify_transaction: TransactionVerifier | None = None,
        serves: Serves | None = None,
    ) -> None:
        """`verify_transaction` is the transaction coordinator's check that a TxnOffsetCommit's producer added the
        group's partition to its transaction (AddOffsetsToTxn, `offset_base.TransactionVerifier`); None accepts
        every transaction. `serves` (several-node clusters) says whether the node a request came to leads a
        partition (`partitions.PartitionTable.gate`); None: every request's node does."""
        self._config = config
        self._events = events if events is not None else Events()
        self._timer = Timer()
        self._time = TimeRegister()
        self._table = PartitionTable(config, serves)
        self._runtime = CoordinatorRuntime(
            store, self._timer, self._time, config.offsets_commit_timeout_ms, self._events
        )
        write = self._runtime.write
        gate = self._table.gate
        parts = ManagerParts(
            config, self._events, self._timer, self._time, gate, write, self._reload, serves is not None
        )
        self._groups = GroupMetadataManager(parts, decode_subscription, topics)
        self._offsets = OffsetMetadataManager(parts, self._groups, known_partition, verify_transaction)
        self._partitions = PartitionManager(
            config, self._events, self._table, self._groups, self._offsets, self._runtime
        )

    # -- group APIs ------------------------------------------------------------------------------------------

    def join_group(self, ctx: RequestContext, request: JoinGroupRequest, now_ms: int) -> Reply[JoinGroupResponse]:
        """JoinGroup (#6-#19): the reply is completed now or when the join phase completes."""
        self._time.advance(now_ms, ctx.wall_ms)
        return self._runtime.write(self._groups.join_group(ctx, request))

    def sync_group(self, ctx: RequestContext, request: SyncGroupRequest, now_ms: int) -> Reply[SyncGroupResponse]:
        """SyncGroup (#20-#25): completed now, or once the leader's assignment is durable."""
        self._time.advance(now_ms, ctx.wall_ms)
        return self._runtime.write(self._groups.sync_group(ctx, request))

    def heartbeat(self, ctx: RequestContext, request: HeartbeatRequest, now_ms: int) -> HeartbeatResponse:
        """Heartbeat (#26-#27), the hot path: no records, answered at once."""
        self._time.advance(now_ms, ctx.wall_ms)
        return self._groups.heartbeat(ctx, request, now_ms)

    def leave_group(self, ctx: RequestContext, request: LeaveGroupRequest, now_ms: int) -> Reply[LeaveGroupResponse]:
        """LeaveGroup (#28-#31): a classic group's at once; a consumer group's (M22) once its records are durable."""
        self._time.advance(now_ms, ctx.wall_ms)
        return self._runtime.write(self._groups.leave_group_write(ctx, request, now_ms))

    def describe_groups(
        self, ctx: RequestContext, request: DescribeGroupsRequest, now_ms: int
    ) -> DescribeGroupsResponse:
        """DescribeGroups (#40)."""
        self._time.advance(now_ms, ctx.wall_ms)
        return self._groups.describe_groups(request, ctx.api_version)

    def list_groups(self, ctx: RequestContext, request: ListGroupsRequest, now_ms: int) -> ListGroupsResponse:
        """ListGroups (#41)."""
        self._time.advance(now_ms, ctx.wall_ms)
        return self._groups.list_groups(request, self._table.listing_error(), self._table.lists)

    def delete_groups(
        self, ctx: RequestContext, request: DeleteGroupsRequest, now_ms: int
    ) -> Reply[DeleteGroupsResponse]:
        """DeleteGroups (#42): answered once every partition's tombstones are durable."""
        self._time.advance(now_ms, ctx.wall_ms)
        return self._runtime.write_all(*self._groups.delete_groups(request))

    # -- consumer groups (KIP-848) ---------------------------------------------------------------------------

    def consumer_group_heartbeat(
        self, ctx: RequestContext, request: ConsumerGroupHeartbeatRequest, now_ms: int
    ) -> Reply[ConsumerGroupHeartbeatResponse]:
        """ConsumerGroupHeartbeat (K1-K38): answered once the records it wrote are durable (at once if none)."""
        self._time.advance(now_ms, ctx.wall_ms)
        return self._runtime.write(self._groups.consumer_group_heartbeat(ctx, request))

    def consumer_group_describe(
        self, ctx: RequestContext, request: ConsumerGroupDescribeRequest, now_ms: int
    ) -> ConsumerGroupDescribeResponse:
        """ConsumerGroupDescribe (K41-K42)."""
        self._time.advance(now_ms, ctx.wall_ms)
        return self._groups.consumer_group_describe(request)

    # -- offset APIs -----------------------------------------------------------------------------------------

    def offset_commit(
        self, ctx: RequestContext, request: OffsetCommitRequest, now_ms: int
    ) -> Reply[OffsetCommitResponse]:
        """OffsetCommit (#32-#35): answered when the commits are durable (or at once on errors)."""
        self._time.advance(now_ms, ctx.wall_ms)
        return self._runtime.write(self._offsets.offset_commit(ctx, request))

    def offset_fetch(self, ctx: RequestContext, request: OffsetFetchRequest, now_ms: int) -> OffsetFetchResponse:
        """OffsetFetch (#37-#39)."""
        self._time.advance(now_ms, ctx.wall_ms)
        return self._offsets.offset_fetch(ctx, request)

    def offset_delete(
        self, ctx: RequestContext, request: OffsetDeleteRequest, now_ms: int
    ) -> Reply[OffsetDeleteResponse]:
        """OffsetDelete (#43): answered once the tombstones are durable."""
        self._time.advance(now_ms, ctx.wall_ms)
        return self._runtime.write(self._offsets.offset_delete(request))

    # -- transactions ----------------------------------------------------------------------------------------

    def txn_offset_commit(
        self, ctx: RequestContext, request: TxnOffsetCommitRequest, now_ms: int
    ) -> Reply[TxnOffsetCommitResponse]:
        """TxnOffsetCommit (T56-T62): answered once the transactional batch is durable; the offsets stay pending
        (invisible to OffsetFetch) until the producer's marker."""
        self._time.advance(now_ms, ctx.wall_ms)
        return self._runtime.write(self._offsets.txn_offset_commit(ctx, request))

    def complete_transaction(
        self,
        partition: int,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        commit: bool,
        now_ms: int,
        wall_ms: int | None = None,
    ) -> Reply[ErrorCode]:
        """Write the producer's COMMIT (`commit`) or ABORT marker to `__consumer_offsets` partition `partition` and,
        once it is durable, materialise or drop that producer's pending offsets in every group of the partition
        (T64, Kafka's `completeTransaction` + `replayEndTransactionMarker`). Answers NONE, or NOT_COORDINATOR /
        COORDINATOR_LOAD_IN_PROGRESS / COORDINATOR_NOT_AVAILABLE (which WriteTxnMarkers answers as
        NOT_LEADER_OR_FOLLOWER, T35), or another error of the write; on an error nothing changed."""
        self._time.advance(now_ms, wall_ms)
        marker = TransactionMarker(producer_id, producer_epoch, coordinator_epoch, commit)
        return self._runtime.write(
            self._offsets.complete_transaction(partition, marker, self._table.partition_gate(partition))
        )

    # -- time ------------------------------------------------------------------------------------------------

    # `tick` and `next_deadline_ms`: `TimerDriven`.

    # -- partition ownership ---------------------------------------------------------------------------------

    def begin_loading(self, partition: int) -> None:
        """Became leader of `partition`: its groups answer COORDINATOR_LOAD_IN_PROGRESS until it is loaded."""
        self._partitions.begin_loading(partition)

    def load_partition(
        self, partition: int, records: Iterable[LogEntry], now_ms: int, wall_ms: int | None = None
    ) -> bool:
        """Replay `partition`'s records and transaction markers (in log order) and serve its groups; False (and
        FAILED) when that cannot finish."""
        self._time.advance(now_ms, wall_ms)
        return self._partitions.load_partition(partition, records)

    def fail_loading(self, partition: int, reason: str, now_ms: int, wall_ms: int | None = None) -> None:
        """The load of `partition` cannot finish: NOT_COORDINATOR for its groups from now on."""
        self._time.advance(now_ms, wall_ms)
        self._partitions.fail_loading(partition, reason)

    def unload_partition(self, partition: int, now_ms: int, wall_ms: int | None = None) -> None:
        """Lost `partition`: its groups go Dead, parked replies and in-flight writes get NOT_COORDINATOR."""
        self._time.advance(now_ms, wall_ms)
        self._partitions.unload_partition(partition)

    def take_reloads(self) -> list[int]:
        """Partitions the coordinator unloaded because memory could not be put back after a failed write: each
        answers COORDINATOR_LOAD_IN_PROGRESS until the caller reads its log and calls `load_partition`."""
        return self._partitions.take_reloads()

    def _reload(self, partition: int, reason: str) -> None:
        self._partitions.reload(partition, reason)

    def shutdown(self, now_ms: int, wall_ms: int | None = None) -> None:
        """Unload everything and answer COORDINATOR_NOT_AVAILABLE from now on."""
        self._time.advance(now_ms, wall_ms)
        self._partitions.shutdown()

    # -- controls (operators and tests) ----------------------------------------------------------------------

    def expire_member_now(self, group_id: str, member_id: str, now_ms: int) -> bool:
        """Treat the member as if its session timed out this instant; False if there is no such member."""
        self._time.advance(now_ms, None)
        return self._groups.expire_member_now(group_id, member_id)

    def force_rebalance(self, group_id: str, now_ms: int, reason: str = "forced by operator") -> bool:
        """Start a rebalance of a Stable or CompletingRebalance group; False if it has none to start."""
        self._time.advance(now_ms, None)
        return self._groups.force_rebalance(group_id, reason)

    def expire_consumer_member_now(self, group_id: str, member_id: str, now_ms: int) -> bool:
        """Fence a consumer-group member as its session expiry would, now; False if there is no such member."""
        self._time.advance(now_ms, None)
        return self._groups.expire_consumer_member_now(group_id, member_id)

    def force_target_assignment(self, group_id: str, now_ms: int, reason: str = "forced by operator") -> bool:
        """Bump a consumer group's epoch so that its next heartbeat computes a new target assignment; False for
        an unknown or empty group."""
        self._time.advance(now_ms, None)
        return self._groups.force_consumer_target_assignment(group_id, reason)

    def consumer_member_views(self, group_id: str) -> list[ConsumerMemberView]:
        """A consumer group's members: current, pending-revocation and target partitions by topic name, timers."""
        return self._groups.consumer_member_views(group_id)

    def member_views(self, group_id: str) -> list[MemberView]:
        return self._groups.member_views(group_id)

    def waiting_for(self, group_id: str) -> list[str]:
        """Members the current rebalance still waits for."""
        return self._groups.waiting_for(group_id)

    # -- read-only views -------------------------------------------------------------------------------------

    @property
    def config(self) -> CoordinatorConfig:
        return self._config

    def group(self, group_id: str) -> ClassicGroup | None:
        """The group's live metadata, for inspection only (tests, the simulator's invariants)."""
        return self._groups.group(group_id)

    def groups(self) -> list[ClassicGroup]:
        return self._groups.groups()

    def consumer_group(self, group_id: str) -> ConsumerGroup | None:
        """A KIP-848 group's live metadata, for inspection only."""
        return self._groups.consumer_group(group_id)

    def consumer_groups(self) -> list[ConsumerGroup]:
        return self._groups.consumer_groups()

    def partition_for(self, group_id: str) -> int:
        """Rule #1: the `__consumer_offsets` partition (and so the coordinator) of `group_id`."""
        return partition_for(group_id, self._config.offsets_topic_num_partitions)

    def owned_partitions(self) -> dict[int, str]:
        return self._table.owned()

    def load_failures(self) -> dict[int, str]:
        """Why each FAILED partition could not be loaded."""
        return self._table.failures()
