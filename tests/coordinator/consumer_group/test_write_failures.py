"""A consumer-group write that fails is undone without touching what other writes made durable.

Every write about a group is built on the group as the previous writes left it in memory. When the failed write is
the group's last one, restoring the snapshot taken before it undoes exactly that write. When later writes were
built on it (several heartbeats in flight at once), restoring that snapshot would also drop their changes, which
may be durable by then: the coordinator unloads the partition and loads it again from the log, which holds exactly
what was written, as Kafka's runtime reverts a shard to its last committed offset."""

from __future__ import annotations

from protocol.errors import ErrorCode
from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext


def _fresh_load(ctx: ConsumerGroupTestContext) -> ConsumerGroupTestContext:
    """What a coordinator loading the same log now would hold."""
    return ConsumerGroupTestContext({"foo": 4}, store=ctx.store, start_ms=ctx.now_ms)


def test_a_failed_write_under_a_later_durable_one_reloads_the_partition_from_the_log() -> None:
    ctx = ConsumerGroupTestContext({"foo": 4})
    ctx.join_cg(member_id="m1", topics=["foo"])
    ctx.store.auto_durable = False
    first = ctx.cg_heartbeat(member_id="m2", subscribed_topic_names=["foo"], rebalance_timeout_ms=30_000, owned={})
    second = ctx.cg_heartbeat(member_id="m3", subscribed_topic_names=["foo"], rebalance_timeout_ms=30_000, owned={})
    assert ctx.store.pending_appends == 2
    assert ctx.store.fail_pending(ErrorCode.KAFKA_STORAGE_ERROR, count=1) == 1
    assert ctx.store.flush() == 1  # m3's join is durable, and it was computed with m2 in the group
    assert first.value.error_code == ErrorCode.NOT_COORDINATOR
    assert second.value.error_code == ErrorCode.NOT_COORDINATOR  # its answer was lost with the unloaded partition
    assert ctx.coordinator.load_failures() == {}
    loading = ctx.cg_heartbeat(member_id="m1", member_epoch=2).value
    assert loading.error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    partition = ctx.coordinator.partition_for("group")
    assert ctx.load_reloads() == [partition]
    group = ctx.cg()
    expected = _fresh_load(ctx).cg()
    assert list(group.members) == list(expected.members) == ["m1", "m3"]
    assert (group.group_epoch, group.assignment_epoch) == (expected.group_epoch, expected.assignment_epoch)
    assert group.target == expected.target
    assert [e["partition"] for e in ctx.events.of("partition.reload")] == [partition]


def test_a_failed_write_that_is_the_groups_last_is_undone_in_place() -> None:
    ctx = ConsumerGroupTestContext({"foo": 4})
    ctx.join_cg(member_id="m1", topics=["foo"])
    before = ctx.cg()
    epochs = (before.group_epoch, before.assignment_epoch)
    ctx.store.auto_durable = False
    joined = ctx.cg_heartbeat(member_id="m2", subscribed_topic_names=["foo"], rebalance_timeout_ms=30_000, owned={})
    assert ctx.store.fail_pending(ErrorCode.KAFKA_STORAGE_ERROR) == 1
    assert joined.value.error_code == ErrorCode.NOT_COORDINATOR
    assert ctx.coordinator.take_reloads() == []
    group = ctx.cg()
    assert list(group.members) == ["m1"]
    assert (group.group_epoch, group.assignment_epoch) == epochs
    assert not ctx.events.of("partition.reload")
