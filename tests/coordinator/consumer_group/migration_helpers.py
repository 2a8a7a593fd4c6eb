"""Builders for the online-migration tests: a Stable classic group whose members hold real ConsumerProtocol
assignments (what a Java or librdkafka consumer group looks like before it is upgraded)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from coordinator.records import CoordinatorRecord
from protocol.consumer_protocol import decode_assignment, encode_assignment, encode_subscription
from protocol.errors import ErrorCode
from protocol.messages.consumer_protocol_assignment import ConsumerProtocolAssignment
from protocol.messages.consumer_protocol_assignment import TopicPartition as AssignedTopic
from protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from protocol.messages.consumer_protocol_subscription import TopicPartition as OwnedTopic
from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext

GROUP = "group"


def classic_subscription(
    topics: Sequence[str] = ("foo",), owned: Mapping[str, Sequence[int]] | None = None, version: int = 3
) -> bytes:
    """A ConsumerProtocol subscription as a classic consumer sends it in JoinGroup (owned partitions: v1+)."""
    value = ConsumerProtocolSubscription(
        topics=list(topics),
        owned_partitions=[OwnedTopic(topic=t, partitions=list(p)) for t, p in (owned or {}).items()],
    )
    return encode_subscription(value, version)


def classic_assignment(partitions: Mapping[str, Sequence[int]], user_data: bytes | None = None) -> bytes:
    return encode_assignment(
        ConsumerProtocolAssignment(
            assigned_partitions=[AssignedTopic(topic=t, partitions=list(p)) for t, p in partitions.items()],
            user_data=user_data,
        )
    )


def assigned_partitions(data: bytes) -> dict[str, list[int]]:
    return {t.topic: sorted(t.partitions) for t in decode_assignment(data).assigned_partitions}


@dataclass
class ClassicGroupSetup:
    member_ids: list[str]
    generation_id: int


def stable_classic_group(
    ctx: ConsumerGroupTestContext,
    assignments: Sequence[Mapping[str, Sequence[int]]],
    *,
    protocols: Sequence[str] = ("range",),
    protocol_type: str = "consumer",
    session_timeout_ms: int = 10_000,
    rebalance_timeout_ms: int = 10_000,
    raw_assignments: Sequence[bytes] | None = None,
    static: bool = False,
) -> ClassicGroupSetup:
    """A Stable classic group of len(assignments) members subscribed to foo; member i holds assignments[i]."""
    metadata = classic_subscription()
    saved, ctx.auto_tick = ctx.auto_tick, False
    try:
        replies = [
            ctx.join_dynamic(
                group_id=GROUP,
                protocols=[(name, metadata) for name in protocols],
                protocol_type=protocol_type,
                session_timeout_ms=session_timeout_ms,
                rebalance_timeout_ms=rebalance_timeout_ms,
                group_instance_id=f"instance-{i}" if static else None,
            )
            for i in range(len(assignments))
        ]
    finally:
        ctx.auto_tick = saved
    ctx.tick()
    responses = [r.value for r in replies]
    assert all(r.error_code == ErrorCode.NONE for r in responses), responses
    member_ids = [r.member_id for r in responses]
    generation = responses[0].generation_id
    leader = responses[0].leader
    blobs = raw_assignments or [classic_assignment(a) for a in assignments]
    plan = dict(zip(member_ids, blobs, strict=True))
    for i, member_id in enumerate(member_ids):
        reply = ctx.sync(
            group_id=GROUP,
            member_id=member_id,
            generation_id=generation,
            group_instance_id=f"instance-{i}" if static else None,
            protocol_type=protocol_type,
            protocol_name=protocols[0],
            assignments=plan if member_id == leader else None,
        )
        assert reply.value.error_code == ErrorCode.NONE
    return ClassicGroupSetup(member_ids, generation)


def log_of(ctx: ConsumerGroupTestContext) -> list[CoordinatorRecord]:
    return ctx.store.records(ctx.coordinator.partition_for(GROUP))


ONE_EACH = ({"foo": [0, 1]}, {"foo": [2]})


def mixed_group(**config: object) -> tuple[ConsumerGroupTestContext, ClassicGroupSetup]:
    """Classic m0 (foo-0, foo-1) and m1 (foo-2) at generation 1 (session 10 s, rebalance 20 s), upgraded by the
    consumer member "new" (group epoch 2): the state of a group half-way through a rolling upgrade."""
    config.setdefault("consumer_group_migration_policy", "bidirectional")
    ctx = ConsumerGroupTestContext({"foo": 3}, **config)
    setup = stable_classic_group(ctx, ONE_EACH, session_timeout_ms=10_000, rebalance_timeout_ms=20_000)
    ctx.join_cg(GROUP, "new", ["foo"], rebalance_timeout_ms=20_000)
    assert ctx.cg(GROUP).group_epoch == setup.generation_id + 1
    return ctx, setup
