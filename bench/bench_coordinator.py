"""The coordinator alone, no I/O: heartbeat throughput, a 1,000-member rebalance, memory per member, and the
steady ConsumerGroupHeartbeat rate of a 1,000-member KIP-848 consumer group.

Targets (issue, reported against, never asserted): >= 200,000 heartbeats/s on one core; a 1,000-member group
completes JoinGroup + SyncGroup in <= 50 ms of CPU; memory per member with a 100-byte subscription (printed).

Events go to a structlog logger filtered at WARNING (the info events a rebalance emits are then near-free, as with
a production log level above INFO); the rebalance is also timed with events rendered as JSON lines into a
throw-away stream, the cost of logging every state change at INFO.
"""

from __future__ import annotations

import gc
import io
import logging
import time
import tracemalloc
from collections.abc import Sequence
from typing import Any

import structlog

from coordinator.config import CoordinatorConfig
from coordinator.consumer_group.topics import StaticTopicCatalog, TopicImage
from coordinator.context import RequestContext
from coordinator.coordinator import GroupCoordinator
from coordinator.events import Events
from coordinator.persistence import AppendCallback, InMemoryRecordStore
from coordinator.records import CoordinatorRecord
from protocol.errors import ErrorCode
from protocol.kafka_uuid import kafka_uuid_from_str
from protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest, TopicPartitions
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment

SUBSCRIPTION = bytes(100)
HEARTBEATS = 600_000
GROUP_SIZE = 1_000
MEMORY_MEMBERS = 10_000


def _quiet_events() -> Events:
    return Events(structlog.wrap_logger(None, wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING)))


def _json_events() -> Events:
    sink = io.StringIO()
    logger = structlog.wrap_logger(
        structlog.WriteLogger(sink),
        processors=[structlog.processors.add_log_level, structlog.processors.JSONRenderer()],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
    )
    return Events(logger)


def _coordinator(events: Events) -> GroupCoordinator:
    config = CoordinatorConfig(group_initial_rebalance_delay_ms=0, member_id_seed=1)
    coordinator = GroupCoordinator(config, InMemoryRecordStore(), events=events)
    for partition in range(config.offsets_topic_num_partitions):
        coordinator.load_partition(partition, [], 0, 1_700_000_000_000)
    return coordinator


def _join_request(group_id: str, member_id: str = "") -> JoinGroupRequest:
    return JoinGroupRequest(
        group_id=group_id,
        member_id=member_id,
        session_timeout_ms=45_000,
        rebalance_timeout_ms=300_000,
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=SUBSCRIPTION)],
    )


def _rebalance(coordinator: GroupCoordinator, group_id: str, size: int, now_ms: int, version: int = 3) -> list[str]:
    """Join `size` members (v4+ with the MEMBER_ID_REQUIRED round first), complete the join, sync everyone."""
    ctx = RequestContext(api_version=version, client_id="bench-client", client_host="/10.0.0.1", wall_ms=now_ms)
    member_ids = [""] * size
    if version >= 4:
        member_ids = [coordinator.join_group(ctx, _join_request(group_id), now_ms).value.member_id for _ in range(size)]
    replies = [coordinator.join_group(ctx, _join_request(group_id, m), now_ms) for m in member_ids]
    coordinator.tick(now_ms)
    responses = [r.value for r in replies]
    assert all(r.error_code == ErrorCode.NONE for r in responses)
    leader = responses[0].leader
    generation = responses[0].generation_id
    members = [r.member_id for r in responses]
    assignments = [SyncGroupRequestAssignment(member_id=m, assignment=b"x" * 20) for m in members]
    sync_ctx = RequestContext(api_version=3, wall_ms=now_ms)
    syncs = []
    for member_id in members:
        request = SyncGroupRequest(
            group_id=group_id,
            member_id=member_id,
            generation_id=generation,
            assignments=assignments if member_id == leader else [],
        )
        syncs.append(coordinator.sync_group(sync_ctx, request, now_ms))
    assert all(s.done and s.value.error_code == ErrorCode.NONE for s in syncs)
    return members


def bench_heartbeats() -> tuple[float, float]:
    """Heartbeats/s (wall, CPU) against 100 Stable groups of 10 members."""
    coordinator = _coordinator(_quiet_events())
    requests: list[HeartbeatRequest] = []
    for g in range(100):
        group_id = f"hb-group-{g}"
        for member_id in _rebalance(coordinator, group_id, 10, 0):
            requests.append(HeartbeatRequest(group_id=group_id, member_id=member_id, generation_id=1))
    ctx = RequestContext(api_version=4)
    heartbeat = coordinator.heartbeat
    count = len(requests)
    rounds = HEARTBEATS // count
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    now_ms = 0
    for _ in range(rounds):
        now_ms += 1
        for request in requests:
            heartbeat(ctx, request, now_ms)
    cpu = time.process_time() - cpu
    wall = time.perf_counter() - wall
    done = rounds * count
    last = heartbeat(ctx, requests[0], now_ms)
    assert last.error_code == ErrorCode.NONE
    return done / wall, done / cpu


def bench_consumer_heartbeats(members: int = GROUP_SIZE, rounds: int = 20) -> float:
    """Steady ConsumerGroupHeartbeats/s of one consumer group of `members` members, all Stable (what each member
    sends every heartbeat interval once the group has formed)."""
    topic_id = "AAAAAAAAAAAAAAAAAAAAAQ"
    config = CoordinatorConfig(consumer_group_max_size=members, consumer_group_assignment_interval_ms=0)
    topics = StaticTopicCatalog([TopicImage(topic_id, "bench", members * 2)])
    coordinator = GroupCoordinator(config, InMemoryRecordStore(), events=_quiet_events(), topics=topics)
    for partition in range(config.offsets_topic_num_partitions):
        coordinator.load_partition(partition, [], 0, 1_700_000_000_000)
    ctx = RequestContext(api_version=1)
    heartbeat = coordinator.consumer_group_heartbeat
    ids = [f"member-{i:04d}" for i in range(members)]
    for member_id in ids:
        join = ConsumerGroupHeartbeatRequest(
            group_id="steady", member_id=member_id, member_epoch=0, rebalance_timeout_ms=30_000,
            subscribed_topic_names=["bench"], topic_partitions=[],
        )  # fmt: skip
        heartbeat(ctx, join, 0)
    group = coordinator.consumer_group("steady")
    assert group is not None
    for _ in range(4):  # each member confirms what it holds until every one is Stable at the group epoch
        for member_id in ids:
            member = group.members[member_id]
            owned = sorted(p for _, p in member.assignment.assigned_partitions)
            wire = [TopicPartitions(topic_id=kafka_uuid_from_str(topic_id), partitions=owned)]
            confirm = ConsumerGroupHeartbeatRequest(
                group_id="steady", member_id=member_id, member_epoch=member.member_epoch, topic_partitions=wire
            )
            heartbeat(ctx, confirm, 0)
    steady = [
        ConsumerGroupHeartbeatRequest(group_id="steady", member_id=m, member_epoch=group.members[m].member_epoch)
        for m in ids
    ]
    gc.collect()
    wall = time.perf_counter()
    for _ in range(rounds):
        for request in steady:
            heartbeat(ctx, request, 1)
    wall = time.perf_counter() - wall
    assert group.state.value == "Stable"
    return rounds * members / wall


def bench_rebalance(events: Events, version: int = 3) -> float:
    """CPU ms for a 1,000-member group to complete JoinGroup and SyncGroup (best of 5 fresh groups)."""
    coordinator = _coordinator(events)
    best = float("inf")
    for attempt in range(5):
        gc.collect()
        cpu = time.process_time()
        _rebalance(coordinator, f"big-group-{attempt}", GROUP_SIZE, 0, version)
        best = min(best, (time.process_time() - cpu) * 1000)
    return best


class _DurableNowhere:
    """A RecordLog that acknowledges at once and keeps nothing, so only the coordinator's own state is measured."""

    def append(self, partition: int, records: Sequence[CoordinatorRecord], on_durable: AppendCallback) -> None:
        on_durable(ErrorCode.NONE)


def bench_memory() -> float:
    """Bytes per member of a Stable group: everything the coordinator keeps (member, subscription, assignment,
    timer entry, maps), measured with tracemalloc after the requests and responses are gone."""
    config = CoordinatorConfig(group_initial_rebalance_delay_ms=0, member_id_seed=1)
    coordinator = GroupCoordinator(config, _DurableNowhere(), events=_quiet_events())
    coordinator.load_partition(coordinator.partition_for("memory-group"), [], 0, 1_700_000_000_000)
    coordinator.load_partition(coordinator.partition_for("warmup"), [], 0, 1_700_000_000_000)
    _rebalance(coordinator, "warmup", 10, 0)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    _rebalance(coordinator, "memory-group", MEMORY_MEMBERS, 0)
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    return grown / MEMORY_MEMBERS


def run() -> list[tuple[str, Any]]:
    hb_wall, hb_cpu = bench_heartbeats()
    quiet_ms = bench_rebalance(_quiet_events())
    json_ms = bench_rebalance(_json_events())
    v9_ms = bench_rebalance(_quiet_events(), version=9)
    per_member = bench_memory()
    consumer_hb = bench_consumer_heartbeats()
    rows: list[tuple[str, Any]] = [
        ("heartbeats/s (wall)  [target >= 200,000]", hb_wall),
        ("heartbeats/s (CPU)", hb_cpu),
        (f"{GROUP_SIZE}-member join+sync, CPU ms  [target <= 50]", quiet_ms),
        (f"{GROUP_SIZE}-member join+sync, CPU ms, events as JSON", json_ms),
        (f"{GROUP_SIZE}-member join+sync, CPU ms, v9 (MEMBER_ID_REQUIRED round)", v9_ms),
        ("memory per member, bytes (100-byte subscription)", per_member),
        (f"consumer-group heartbeats/s (wall), {GROUP_SIZE} Stable members", consumer_hb),
    ]
    width = max(len(label) for label, _ in rows)
    print("group coordinator, sans-IO, one core")
    for label, value in rows:
        print(f"  {label:<{width}}  {value:>14,.1f}")
    return []


if __name__ == "__main__":
    run()
