"""OffsetCommit / OffsetFetch / retention: rules #32-#39."""

from __future__ import annotations

import pytest

from coordinator.errors import offset_fetch_error
from coordinator.state import GroupState
from protocol.errors import ErrorCode
from protocol.messages.offset_commit import OffsetCommitRequest
from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchRequestTopics
from tests.coordinator.harness import CoordinatorTestContext, completing, dead_group

NONE = ErrorCode.NONE
DAY_MS = 24 * 3600 * 1000


def errors(ctx: CoordinatorTestContext, reply: object) -> set[ErrorCode]:
    return set(ctx.commit_errors(reply).values())  # type: ignore[arg-type]


# -- #32 -----------------------------------------------------------------------------------------------------


def test_rule_32_commit_validation_against_group_and_generation() -> None:
    ctx = CoordinatorTestContext()
    dead_group(ctx)
    assert errors(ctx, ctx.commit(group_id="dead")) == {ErrorCode.COORDINATOR_NOT_AVAILABLE}
    ctx.store.auto_durable = True
    ctx.store.flush()
    g = ctx.join_with_n_members("g", 2)
    assert errors(ctx, ctx.commit(group_id="g", member_id=g.leader_id, generation_id=g.generation_id)) == {NONE}
    assert errors(ctx, ctx.commit(group_id="g", member_id="x", generation_id=g.generation_id)) == {
        ErrorCode.UNKNOWN_MEMBER_ID
    }
    assert errors(ctx, ctx.commit(group_id="g", member_id=g.leader_id, generation_id=7)) == {
        ErrorCode.ILLEGAL_GENERATION
    }
    # generation -1 without member id on a non-empty group: unknown member
    assert errors(ctx, ctx.commit(group_id="g")) == {ErrorCode.UNKNOWN_MEMBER_ID}
    # member id without generation: member checks, then generation mismatch
    assert errors(ctx, ctx.commit(group_id="g", member_id=g.leader_id)) == {ErrorCode.ILLEGAL_GENERATION}


def test_rule_32_preparing_rebalance_accepts_previous_generation_completing_does_not() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2)
    ctx.join(group_id="g", member_id=g.leader_id)
    assert ctx.state("g") is GroupState.PREPARING_REBALANCE
    reply = ctx.commit(group_id="g", member_id=g.followers[0], generation_id=g.generation_id, offsets={("t", 0): 5})
    assert errors(ctx, reply) == {NONE}
    assert ctx.committed_offset("g", "t", 0) == 5
    members, _leader, generation = completing(ctx2 := CoordinatorTestContext(), 2)
    reply2 = ctx2.commit(group_id="g", member_id=members[0], generation_id=generation)
    assert errors(ctx2, reply2) == {ErrorCode.REBALANCE_IN_PROGRESS}


def test_rule_32_simple_consumer_commits_to_an_empty_group() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 1)
    ctx.leave("g", (g.leader_id, None))
    assert errors(ctx, ctx.commit(group_id="g", offsets={("t", 1): 42})) == {NONE}
    assert ctx.committed_offset("g", "t", 1) == 42


# -- #33 -----------------------------------------------------------------------------------------------------


def test_rule_33_commit_to_a_missing_group_creates_a_simple_group_or_fails_by_version() -> None:
    ctx = CoordinatorTestContext()
    assert errors(ctx, ctx.commit(group_id="simple", offsets={("t", 0): 9})) == {NONE}
    group = ctx.group("simple")
    assert group.state is GroupState.EMPTY and group.protocol_type is None and group.generation_id == 0
    assert ctx.committed_offset("simple", "t", 0) == 9
    assert errors(ctx, ctx.commit(group_id="nope", generation_id=1, member_id="m", version=8)) == {
        ErrorCode.ILLEGAL_GENERATION
    }
    assert errors(ctx, ctx.commit(group_id="nope", generation_id=1, member_id="m", version=9)) == {
        ErrorCode.GROUP_ID_NOT_FOUND
    }
    assert ctx.coordinator.group("nope") is None
    assert errors(ctx, ctx.commit(group_id="")) == {NONE}  # the empty group id is valid for commits


# -- #34 -----------------------------------------------------------------------------------------------------


def test_rule_34_a_commit_without_a_known_partition_never_reaches_the_group() -> None:
    """Kafka's API layer answers a commit whose partitions are all unknown (or that has none) itself: no group
    check, no group created (KafkaApis.handleOffsetCommitRequest; found by the differential suite)."""
    ctx = CoordinatorTestContext(known_partition=lambda topic, partition: topic != "ghost")
    reply = ctx.commit(group_id="g", offsets={("ghost", 0): 1}, generation_id=3, member_id="someone")
    assert ctx.commit_errors(reply) == {("ghost", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert ctx.coordinator.group("g") is None
    empty = ctx.commit(OffsetCommitRequest(group_id="h", topics=[]))
    assert empty.value.topics == []
    assert ctx.coordinator.group("h") is None


def test_rule_34_unknown_partitions_and_oversized_metadata_fail_alone() -> None:
    ctx = CoordinatorTestContext(known_partition=lambda topic, partition: topic != "ghost")
    reply = ctx.commit(group_id="g", offsets={("t", 0): 1, ("ghost", 0): 1})
    assert ctx.commit_errors(reply) == {("t", 0): NONE, ("ghost", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    ok = ctx.commit(group_id="g", offsets={("t", 1): 1}, metadata="x" * 4096)
    assert errors(ctx, ok) == {NONE}
    too_large = ctx.commit(group_id="g", offsets={("t", 2): 1}, metadata="x" * 4097)
    assert errors(ctx, too_large) == {ErrorCode.OFFSET_METADATA_TOO_LARGE}
    # Kafka counts Java chars (UTF-16 units): 2048 emoji are 4096 units, one more is too many.
    assert errors(ctx, ctx.commit(group_id="g", offsets={("t", 3): 1}, metadata="\U0001f600" * 2048)) == {NONE}
    assert errors(ctx, ctx.commit(group_id="g", offsets={("t", 4): 1}, metadata="\U0001f600" * 2048 + "x")) == {
        ErrorCode.OFFSET_METADATA_TOO_LARGE
    }
    assert ctx.fetched("g", {"t": [2]})[("t", 2)][0] == -1


def test_rule_34_rejected_partitions_lead_the_response_as_in_kafka() -> None:
    """KafkaApis answers the partitions it rejects before asking the coordinator first (OffsetCommitResponse.Builder),
    then merges the coordinator's answers by topic name: topics with a rejected partition come first, and within
    a topic the rejected partitions precede the rest (found by the differential suite)."""
    ctx = CoordinatorTestContext(known_partition=lambda topic, partition: topic != "ghost" and partition < 2)
    offsets = {("t", 0): 1, ("u", 0): 1, ("t", 5): 1, ("ghost", 0): 1, ("t", 1): 1}
    response = ctx.commit(group_id="g", offsets=offsets).value
    assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in response.topics] == [
        ("t", [(5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), (0, NONE), (1, NONE)]),
        ("ghost", [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]),
        ("u", [(0, NONE)]),
    ]


def test_rule_34_commit_with_every_partition_rejected_leaves_no_group_behind() -> None:
    """When KafkaApis rejects every partition (unknown topics), the coordinator is never asked: no simple group
    is created (found by the differential suite: Kafka then describes the group as Dead)."""
    ctx = CoordinatorTestContext(known_partition=lambda topic, partition: topic != "ghost")
    assert ctx.commit_errors(ctx.commit(group_id="g", offsets={("ghost", 0): 1})) == {
        ("ghost", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    }
    assert ctx.coordinator.group("g") is None
    assert ctx.store.records(ctx.coordinator.partition_for("g")) == []


@pytest.mark.parametrize(
    ("append_error", "answered"),
    [
        # Kafka 4 (CoordinatorOperationExceptionHelper): too large is UNKNOWN_SERVER_ERROR, as for every group API.
        (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.UNKNOWN_SERVER_ERROR),
        (ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.UNKNOWN_SERVER_ERROR),
        (ErrorCode.INVALID_FETCH_SIZE, ErrorCode.UNKNOWN_SERVER_ERROR),
        (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_COORDINATOR),
        (ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.NOT_COORDINATOR),
        (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.COORDINATOR_NOT_AVAILABLE),
        (ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.COORDINATOR_NOT_AVAILABLE),
        (ErrorCode.REQUEST_TIMED_OUT, ErrorCode.COORDINATOR_NOT_AVAILABLE),
    ],
)
def test_rule_34_failed_commit_writes_map_to_kafkas_codes_and_store_nothing(
    append_error: ErrorCode, answered: ErrorCode
) -> None:
    ctx = CoordinatorTestContext()
    ctx.store.fail_next(append_error)
    reply = ctx.commit(group_id="g", offsets={("t", 0): 5, ("t", 1): 6})
    assert errors(ctx, reply) == {answered}
    assert ctx.fetched("g", {"t": [0, 1]}) == {("t", 0): (-1, -1, "", NONE), ("t", 1): (-1, -1, "", NONE)}


def test_rule_34_commit_is_answered_only_once_durable() -> None:
    ctx = CoordinatorTestContext(auto_durable=False)
    reply = ctx.commit(group_id="g", offsets={("t", 0): 5})
    assert not reply.done
    assert ctx.committed_offset("g", "t", 0) == -1  # not visible before it is durable
    ctx.store.flush()
    assert errors(ctx, reply) == {NONE}
    assert ctx.committed_offset("g", "t", 0) == 5
    late = ctx.commit(group_id="g", offsets={("t", 0): 6})
    ctx.sleep(5_000)  # offsets.commit.timeout.ms
    assert errors(ctx, late) == {ErrorCode.COORDINATOR_NOT_AVAILABLE}
    assert ctx.committed_offset("g", "t", 0) == 5


# -- #35 -----------------------------------------------------------------------------------------------------


def test_rule_35_v2_to_v4_retention_becomes_value_v1() -> None:
    ctx = CoordinatorTestContext()
    ctx.commit(group_id="g", offsets={("t", 0): 1}, leader_epoch=3, metadata="m")
    record = ctx.store.records(ctx.group("g").partition)[-1]
    assert record.key_version == 1 and record.value_version == 3
    assert record.value.commit_timestamp == ctx.wall_ms  # type: ignore[union-attr]
    assert (record.value.offset, record.value.leader_epoch, record.value.metadata) == (1, 3, "m")  # type: ignore[union-attr]
    ctx.commit(group_id="g", offsets={("t", 0): 3}, retention_time_ms=60_000, version=2)
    record = ctx.store.records(ctx.group("g").partition)[-1]
    assert record.value_version == 1
    assert record.value.expire_timestamp == ctx.wall_ms + 60_000  # type: ignore[union-attr]
    ctx.commit(group_id="g", offsets={("t", 0): 4}, retention_time_ms=60_000, version=5)  # v5+: no retention
    record = ctx.store.records(ctx.group("g").partition)[-1]
    assert record.value_version == 3 and record.value.expire_timestamp == -1  # type: ignore[union-attr]


# -- #36 -----------------------------------------------------------------------------------------------------


def test_rule_36_offsets_of_an_empty_group_expire_after_retention_since_it_became_empty() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 1, session_timeout_ms=1_800_000)
    ctx.commit(group_id="g", member_id=g.leader_id, generation_id=g.generation_id, offsets={("t", 0): 7})
    while ctx.now_ms < DAY_MS:  # the member stays a day, then leaves
        ctx.sleep(1_500_000)
        assert ctx.heartbeat("g", g.leader_id, g.generation_id) is NONE
    ctx.leave("g", (g.leader_id, None))
    emptied_at = ctx.now_ms
    ctx.sleep(7 * DAY_MS - 1)  # commit is 8 days old, but the group has been Empty for less than 7 days
    assert ctx.committed_offset("g", "t", 0) == 7
    ctx.sleep_until(emptied_at + 7 * DAY_MS + 600_000)
    assert ctx.coordinator.group("g") is None  # no offsets left: the Empty group is removed
    assert ctx.committed_offset("g", "t", 0) == -1
    tail = ctx.store.records(ctx.coordinator.partition_for("g"))[-2:]
    assert [r.value for r in tail] == [None, None]  # offset tombstone, then group tombstone (generation > 0)
    assert ctx.events.of("offsets.expired")[0]["partitions"] == [("t", 0)]


def test_rule_36_stable_consumer_group_expires_only_unsubscribed_topics() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 1, topics=("subscribed",), session_timeout_ms=60_000)
    ctx.commit(
        group_id="g",
        member_id=g.leader_id,
        generation_id=g.generation_id,
        offsets={("subscribed", 0): 1, ("old", 0): 2},
    )
    while ctx.now_ms < 7 * DAY_MS + 600_000:
        ctx.sleep(50_000)
        ctx.heartbeat("g", g.leader_id, g.generation_id)
    assert ctx.fetched("g", {"subscribed": [0], "old": [0]}) == {
        ("subscribed", 0): (1, -1, "", NONE),
        ("old", 0): (-1, -1, "", NONE),
    }
    assert ctx.state("g") is GroupState.STABLE


def test_rule_36_simple_group_explicit_expiry_and_pending_writes() -> None:
    ctx = CoordinatorTestContext(offsets_retention_ms=3_600_000, offsets_retention_check_interval_ms=60_000)
    ctx.commit(group_id="s", offsets={("t", 0): 1})
    ctx.commit(group_id="s", offsets={("t", 1): 1}, retention_time_ms=120_000, version=2)  # explicit: 2 min
    ctx.sleep(180_000)
    assert ctx.fetched("s", {"t": [0, 1]})[("t", 1)][0] == -1  # explicit expire timestamp passed
    assert ctx.fetched("s", {"t": [0, 1]})[("t", 0)][0] == 1
    ctx.store.auto_durable = False
    ctx.sleep(3_600_000 - 180_000 - 1_000)
    pending = ctx.commit(group_id="s", offsets={("t", 0): 2})  # in flight while the sweep runs
    ctx.sleep(1_000)
    ctx.coordinator._offsets.run_retention()  # force a sweep now
    assert ctx.coordinator.group("s") is not None and ctx.group("s").offsets.is_pending("t", 0)
    ctx.store.flush()
    assert errors(ctx, pending) == {NONE}
    assert ctx.committed_offset("s", "t", 0) == 2


# -- #37 -----------------------------------------------------------------------------------------------------


def test_rule_37_fetch_needs_no_membership_and_missing_groups_answer_minus_one() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 1)
    ctx.commit(
        group_id="g",
        member_id=g.leader_id,
        generation_id=g.generation_id,
        offsets={("a", 0): 1, ("a", 1): 2, ("b", 0): 3},
        metadata="meta",
        leader_epoch=5,
    )
    assert ctx.fetched("g", {"a": [0, 9]}) == {("a", 0): (1, 5, "meta", NONE), ("a", 9): (-1, -1, "", NONE)}
    assert ctx.fetched("missing", {"a": [0]}) == {("a", 0): (-1, -1, "", NONE)}
    everything = ctx.fetched("g", None)  # null topics: every committed partition
    assert sorted(everything) == [("a", 0), ("a", 1), ("b", 0)]


def test_rule_37_group_level_errors_by_version_and_v8_groups() -> None:
    ctx = CoordinatorTestContext(partitions=[ctx_partition := 0])
    other = next(gid for gid in (f"g{i}" for i in range(100)) if ctx.coordinator.partition_for(gid) != ctx_partition)
    v1 = ctx.fetch(other, {"t": [0, 1]}, version=1)
    assert v1.error_code == NONE
    assert [(p.partition_index, p.committed_offset, p.error_code) for p in v1.topics[0].partitions] == [
        (0, -1, ErrorCode.NOT_COORDINATOR),
        (1, -1, ErrorCode.NOT_COORDINATOR),
    ]
    v2 = ctx.fetch(other, {"t": [0]}, version=2)
    assert v2.error_code == ErrorCode.NOT_COORDINATOR and v2.topics == []
    mine = next(gid for gid in (f"g{i}" for i in range(100)) if ctx.coordinator.partition_for(gid) == ctx_partition)
    ctx.commit(group_id=mine, offsets={("t", 0): 11})
    request = OffsetFetchRequest(
        groups=[
            OffsetFetchRequestGroup(group_id=mine, topics=[OffsetFetchRequestTopics(name="t", partition_indexes=[0])]),
            OffsetFetchRequestGroup(group_id=other, topics=None),
            OffsetFetchRequestGroup(group_id=mine, topics=None),
        ]
    )
    v8 = ctx.coordinator.offset_fetch(ctx.ctx(8), request, ctx.now_ms)
    assert [(grp.group_id, grp.error_code) for grp in v8.groups] == [
        (mine, NONE),
        (other, ErrorCode.NOT_COORDINATOR),
        (mine, NONE),
    ]
    assert v8.groups[0].topics[0].partitions[0].committed_offset == 11
    assert v8.groups[2].topics[0].partitions[0].committed_offset == 11


# -- #38 -----------------------------------------------------------------------------------------------------


def test_rule_38_require_stable_reports_pending_commits_as_unstable() -> None:
    ctx = CoordinatorTestContext()
    ctx.commit(group_id="g", offsets={("t", 0): 1})
    ctx.store.auto_durable = False
    ctx.commit(group_id="g", offsets={("t", 0): 2})
    assert ctx.fetched("g", {"t": [0]}, require_stable=True) == {
        ("t", 0): (-1, -1, "", ErrorCode.UNSTABLE_OFFSET_COMMIT)
    }
    assert ctx.fetched("g", {"t": [0]}) == {("t", 0): (1, -1, "", NONE)}  # last committed without the flag
    ctx.store.flush()
    assert ctx.fetched("g", {"t": [0]}, require_stable=True) == {("t", 0): (2, -1, "", NONE)}


# -- #39 -----------------------------------------------------------------------------------------------------


def test_rule_39_offset_fetch_remaps_unretried_errors_to_not_coordinator() -> None:
    for error in (ErrorCode.REQUEST_TIMED_OUT, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_ENOUGH_REPLICAS):
        assert offset_fetch_error(error) is ErrorCode.NOT_COORDINATOR
    for error in (ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.INVALID_GROUP_ID):
        assert offset_fetch_error(error) is error
    ctx = CoordinatorTestContext(partitions=[])
    assert ctx.fetch("g", {"t": [0]}).error_code == ErrorCode.NOT_COORDINATOR  # passes through unchanged


def test_offset_delete_does_not_let_an_inflight_commit_resurrect_the_offset() -> None:
    ctx = CoordinatorTestContext()
    ctx.commit(group_id="g", offsets={("t", 0): 1})
    ctx.store.auto_durable = False
    commit = ctx.commit(group_id="g", offsets={("t", 0): 2})
    deletion = ctx.offset_delete("g", {"t": [0]})
    ctx.store.flush()
    assert errors(ctx, commit) == {NONE} and deletion.value.error_code == NONE
    assert ctx.committed_offset("g", "t", 0) == -1  # the log ends with the tombstone, and so does memory
