"""A `__consumer_offsets` partition whose load cannot finish: Kafka's CoordinatorRuntime marks the shard FAILED
(not active), so its groups answer NOT_COORDINATOR with a logged reason, never COORDINATOR_LOAD_IN_PROGRESS
forever; other partitions load and serve as usual."""

from __future__ import annotations

from collections.abc import Iterator

from coordinator.records import CoordinatorRecord
from protocol.errors import ErrorCode
from tests.coordinator.harness import CoordinatorTestContext


def group_on(ctx: CoordinatorTestContext, partition: int, prefix: str = "g") -> str:
    return next(f"{prefix}{i}" for i in range(10_000) if ctx.coordinator.partition_for(f"{prefix}{i}") == partition)


def failing_records(ctx: CoordinatorTestContext, partition: int) -> Iterator[CoordinatorRecord]:
    """The partition's records, then a read error half way (what a broken storage read looks like)."""
    yield from ctx.store.records(partition)
    raise OSError("Input/output error")


def two_partitions_with_commits() -> tuple[CoordinatorTestContext, str, str]:
    writer = CoordinatorTestContext(offsets_topic_num_partitions=2)
    bad, good = group_on(writer, 0), group_on(writer, 1)
    for group in (bad, good):
        writer.commit(group_id=group, member_id="", generation_id=-1, offsets={("t", 0): 1500})
    ctx = CoordinatorTestContext(store=writer.store, partitions=[], offsets_topic_num_partitions=2)
    for partition in (0, 1):
        ctx.coordinator.begin_loading(partition)
    return ctx, bad, good


def test_a_partition_whose_load_fails_answers_not_coordinator_and_says_why() -> None:
    ctx, bad, good = two_partitions_with_commits()
    assert ctx.fetch(bad, {"t": [0]}).error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    loaded = ctx.coordinator.load_partition(0, failing_records(ctx, 0), ctx.now_ms)
    assert loaded is False
    assert ctx.coordinator.load_partition(1, ctx.store.records(1), ctx.now_ms) is True
    assert ctx.coordinator.owned_partitions() == {0: "failed", 1: "active"}
    assert ctx.coordinator.load_failures() == {0: "OSError('Input/output error')"}
    [failed] = ctx.events.of("partition.load_failed")
    assert failed == {"partition": 0, "reason": "OSError('Input/output error')"}
    assert ctx.coordinator.group(bad) is None  # nothing half-loaded stays behind
    for _ in range(5):  # time passing changes nothing: failed is final until the partition is loaded again
        ctx.sleep(60_000)
        assert ctx.fetch(bad, {"t": [0]}).error_code == ErrorCode.NOT_COORDINATOR
        assert ctx.committed_offset(good, "t", 0) == 1500
    commit = ctx.commit(group_id=bad, member_id="", generation_id=-1, offsets={("t", 0): 1})
    assert set(ctx.commit_errors(commit).values()) == {ErrorCode.NOT_COORDINATOR}
    assert ctx.list_groups().error_code == ErrorCode.NONE  # no partition is loading any more


def test_a_failed_partition_can_be_loaded_again() -> None:
    ctx, bad, _good = two_partitions_with_commits()
    assert ctx.coordinator.load_partition(0, failing_records(ctx, 0), ctx.now_ms) is False
    ctx.coordinator.begin_loading(0)
    assert ctx.coordinator.owned_partitions()[0] == "loading"
    assert ctx.coordinator.load_partition(0, ctx.store.records(0), ctx.now_ms) is True
    assert ctx.coordinator.load_failures() == {}
    assert ctx.committed_offset(bad, "t", 0) == 1500


def test_fail_loading_from_the_broker_when_the_read_itself_fails() -> None:
    ctx, bad, good = two_partitions_with_commits()
    ctx.coordinator.fail_loading(0, "cannot read segment 00000000000000000000.log", ctx.now_ms)
    ctx.coordinator.load_partition(1, ctx.store.records(1), ctx.now_ms)
    assert ctx.fetch(bad, {"t": [0]}).error_code == ErrorCode.NOT_COORDINATOR
    assert ctx.committed_offset(good, "t", 0) == 1500
    assert ctx.coordinator.load_failures() == {0: "cannot read segment 00000000000000000000.log"}
