"""Transactional offset commits in the group coordinator (rules T56-T66 of /work/notes/txn-rules.md).

TxnOffsetCommit writes its offsets in a transactional batch of the producer; they stay pending for that producer,
invisible to OffsetFetch (UNSTABLE_OFFSET_COMMIT with require_stable), until the broker hands the coordinator the
producer's COMMIT marker (materialise) or ABORT marker (drop) for the group's `__consumer_offsets` partition
(`complete_transaction`). KIP-447's group checks, the T65 tombstone rules, expiry, and loading are covered here.
"""

from __future__ import annotations

from typing import Any

import pytest

from coordinator.offset_base import TxnOffsetVerification
from coordinator.records import CoordinatorRecord, TransactionMarker
from coordinator.state import GroupState
from protocol.errors import ErrorCode
from protocol.messages.offset_commit_key import OffsetCommitKey
from protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopics,
)
from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext
from tests.coordinator.harness import CoordinatorTestContext, completing, dead_group

P1 = 1000
P2 = 2000
TP = ("topic", 0)


def ok(reply: Any, ctx: CoordinatorTestContext) -> None:
    assert reply.done
    assert set(ctx.txn_errors(reply).values()) == {ErrorCode.NONE}, ctx.txn_errors(reply)


def stable(ctx: CoordinatorTestContext, group: str = "group", tp: tuple[str, int] = TP) -> tuple[int, ErrorCode]:
    """(offset, error) a read_committed consumer sees: OffsetFetch v7 with require_stable."""
    offset, _, _, error = ctx.fetched(group, {tp[0]: [tp[1]]}, require_stable=True)[tp]
    return offset, error


def plain(ctx: CoordinatorTestContext, group: str = "group", tp: tuple[str, int] = TP) -> int:
    """The committed offset OffsetFetch answers without require_stable."""
    return ctx.committed_offset(group, *tp)


def marker_entries(ctx: CoordinatorTestContext, group: str = "group") -> list[TransactionMarker]:
    return [e for e in ctx.store.records(ctx.coordinator.partition_for(group)) if isinstance(e, TransactionMarker)]


# -- pending, commit, abort ----------------------------------------------------------------------------------


def test_t62_t63_txn_offsets_are_pending_and_invisible_until_the_commit_marker() -> None:
    """T62/T63/T64: a TxnOffsetCommit is acknowledged once durable, but OffsetFetch keeps answering the last
    committed offset (-1 here), and UNSTABLE_OFFSET_COMMIT with require_stable, until the COMMIT marker."""
    ctx = CoordinatorTestContext()
    ok(ctx.txn_commit(offsets={TP: 42}, producer_id=P1), ctx)
    assert plain(ctx) == -1
    assert stable(ctx) == (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)
    reply = ctx.complete_txn(P1, commit=True)
    assert reply.done and reply.value == ErrorCode.NONE
    assert plain(ctx) == 42
    assert stable(ctx) == (42, ErrorCode.NONE)


def test_t64_abort_marker_drops_pending_offsets_and_keeps_the_committed_one() -> None:
    """T64: ABORT drops the producer's pending offsets; the offset committed before stays."""
    ctx = CoordinatorTestContext()
    ctx.commit(group_id="group", offsets={TP: 7})
    ok(ctx.txn_commit(offsets={TP: 42}, producer_id=P1), ctx)
    assert stable(ctx) == (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)
    assert plain(ctx) == 7
    assert ctx.complete_txn(P1, commit=False).value == ErrorCode.NONE
    assert stable(ctx) == (7, ErrorCode.NONE)


def test_t57_txn_commit_is_a_transactional_write_and_the_marker_a_control_entry() -> None:
    """T57/T64: the commit records go to the group's partition tagged with the producer (a transactional batch),
    and complete_transaction appends the marker entry for that producer to the same partition."""
    ctx = CoordinatorTestContext()
    ok(ctx.txn_commit(offsets={TP: 42}, producer_id=P1, producer_epoch=3), ctx)
    ctx.complete_txn(P1, commit=True, producer_epoch=3, coordinator_epoch=9)
    entries = ctx.store.records(ctx.coordinator.partition_for("group"))
    record, marker = entries
    assert isinstance(record, CoordinatorRecord)
    assert record.producer_id == P1
    assert record.key == OffsetCommitKey(group="group", topic="topic", partition=0)
    assert marker == TransactionMarker(producer_id=P1, producer_epoch=3, coordinator_epoch=9, commit=True)


def test_t62_two_producers_on_one_group_complete_independently() -> None:
    """T62: different producers keep separate pending offsets; a partition stays unstable while any producer
    has an offset pending there; each marker settles only its own producer's offsets."""
    ctx = CoordinatorTestContext()
    t1 = ("topic", 1)
    ok(ctx.txn_commit(offsets={TP: 10, t1: 11}, producer_id=P1), ctx)
    ok(ctx.txn_commit(offsets={TP: 20}, producer_id=P2, transactional_id="other"), ctx)
    ctx.complete_txn(P1, commit=False)
    assert stable(ctx) == (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)  # P2 still pending on topic-0
    assert stable(ctx, tp=t1) == (-1, ErrorCode.NONE)  # P1 aborted: nothing pending, nothing committed
    ctx.complete_txn(P2, commit=True)
    assert stable(ctx) == (20, ErrorCode.NONE)
    assert stable(ctx, tp=t1) == (-1, ErrorCode.NONE)


def test_t62_the_same_producer_overwrites_its_own_pending_offset() -> None:
    """T62: a second TxnOffsetCommit of the same producer for the same partition replaces its pending value."""
    ctx = CoordinatorTestContext()
    ok(ctx.txn_commit(offsets={TP: 10}, producer_id=P1), ctx)
    ok(ctx.txn_commit(offsets={TP: 15}, producer_id=P1, metadata="second"), ctx)
    ctx.complete_txn(P1, commit=True)
    assert ctx.fetched("group", {"topic": [0]})[TP] == (15, -1, "second", ErrorCode.NONE)


def test_t64_a_later_plain_commit_wins_over_an_earlier_pending_offset() -> None:
    """T64: on COMMIT a pending offset is materialised only if no offset was committed after it in log order: a
    plain commit written after the transactional one wins; one written before it loses."""
    ctx = CoordinatorTestContext()
    ok(ctx.txn_commit(offsets={TP: 10}, producer_id=P1), ctx)
    ctx.commit(group_id="group", offsets={TP: 30})
    ctx.complete_txn(P1, commit=True)
    assert plain(ctx) == 30
    ok(ctx.txn_commit(offsets={TP: 40}, producer_id=P2), ctx)
    ctx.complete_txn(P2, commit=True)
    assert plain(ctx) == 40


def test_t64_an_earlier_producer_committing_last_does_not_overwrite_a_later_one() -> None:
    """T64: two producers commit the same partition; the one whose record came later in the log wins even if its
    marker arrives first."""
    ctx = CoordinatorTestContext()
    ok(ctx.txn_commit(offsets={TP: 10}, producer_id=P1), ctx)
    ok(ctx.txn_commit(offsets={TP: 20}, producer_id=P2), ctx)
    ctx.complete_txn(P2, commit=True)
    ctx.complete_txn(P1, commit=True)
    assert plain(ctx) == 20


def test_t64_a_marker_without_pending_offsets_is_written_and_changes_nothing() -> None:
    """T64: a marker for a producer with nothing pending is still appended (the partition's log needs it) and
    answered NONE; Kafka logs and ignores it on replay."""
    ctx = CoordinatorTestContext()
    ctx.commit(group_id="group", offsets={TP: 7})
    assert ctx.complete_txn(P1, commit=True).value == ErrorCode.NONE
    assert len(marker_entries(ctx)) == 1
    assert plain(ctx) == 7


def test_t64_marker_is_applied_only_once_durable_and_a_failed_marker_write_changes_nothing() -> None:
    """The marker's effect follows its durability: while it is in flight the offsets stay pending; a failed write
    answers the mapped error and leaves them pending, so the transaction coordinator's retry still finds them."""
    ctx = CoordinatorTestContext()
    ok(ctx.txn_commit(offsets={TP: 42}, producer_id=P1), ctx)
    ctx.store.fail_next(ErrorCode.KAFKA_STORAGE_ERROR)
    assert ctx.complete_txn(P1, commit=True).value == ErrorCode.NOT_COORDINATOR
    assert stable(ctx) == (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)
    ctx.store.auto_durable = False
    reply = ctx.complete_txn(P1, commit=True)
    assert not reply.done
    assert stable(ctx) == (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)
    ctx.store.flush()
    assert reply.value == ErrorCode.NONE
    assert stable(ctx) == (42, ErrorCode.NONE)


def test_t64_complete_transaction_answers_partition_state_errors() -> None:
    """Kafka's runtime refuses a marker for a partition that is not loaded here: NOT_COORDINATOR when not owned,
    COORDINATOR_LOAD_IN_PROGRESS while loading, COORDINATOR_NOT_AVAILABLE after shutdown; nothing is written."""
    ctx = CoordinatorTestContext(partitions=[0])
    assert ctx.complete_txn(P1, True, partition=1).value == ErrorCode.NOT_COORDINATOR
    ctx.coordinator.begin_loading(1)
    assert ctx.complete_txn(P1, True, partition=1).value == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    ctx.coordinator.shutdown(ctx.now_ms)
    assert ctx.complete_txn(P1, True, partition=0).value == ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert ctx.store.appends == 0


def test_t63_in_flight_txn_commit_is_unstable_and_failed_write_leaves_nothing_pending() -> None:
    """T63: a TxnOffsetCommit still being written is already unstable for require_stable; a failed write answers
    Kafka's mapped error on every partition and leaves nothing pending."""
    ctx = CoordinatorTestContext(auto_durable=False)
    reply = ctx.txn_commit(offsets={TP: 42}, producer_id=P1)
    assert not reply.done
    assert stable(ctx) == (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)
    ctx.store.fail_pending(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    assert ctx.txn_errors(reply) == {TP: ErrorCode.NOT_COORDINATOR}
    assert stable(ctx) == (-1, ErrorCode.NONE)
    ctx.store.auto_durable = True
    ctx.complete_txn(P1, commit=True)
    assert plain(ctx) == -1


def test_t63_require_stable_per_partition_in_every_fetch_form() -> None:
    """T63: only the partitions with pending transactional offsets are UNSTABLE_OFFSET_COMMIT (offset -1, no
    metadata), in the v7 form, the v8+ multi-group form (per partition, not a group error) and the all-partitions
    form; without require_stable the committed offsets are answered."""
    ctx = CoordinatorTestContext()
    t1 = ("topic", 1)
    ctx.commit(group_id="group", offsets={TP: 5, t1: 6})
    ok(ctx.txn_commit(offsets={TP: 9}, producer_id=P1), ctx)
    fetched = ctx.fetched("group", {"topic": [0, 1]}, require_stable=True)
    assert fetched == {TP: (-1, -1, "", ErrorCode.UNSTABLE_OFFSET_COMMIT), t1: (6, -1, "", ErrorCode.NONE)}
    everything = ctx.fetched("group", None, require_stable=True)
    assert everything == fetched
    assert ctx.fetched("group", {"topic": [0, 1]}) == {
        TP: (5, -1, "", ErrorCode.NONE),
        t1: (6, -1, "", ErrorCode.NONE),
    }
    request = OffsetFetchRequest(
        groups=[
            OffsetFetchRequestGroup(
                group_id="group", topics=[OffsetFetchRequestTopics(name="topic", partition_indexes=[0, 1])]
            )
        ],
        require_stable=True,
    )
    (group,) = ctx.coordinator.offset_fetch(ctx.ctx(8), request, ctx.now_ms).groups
    assert group.error_code == ErrorCode.NONE
    assert [(p.partition_index, p.committed_offset, p.error_code) for p in group.topics[0].partitions] == [
        (0, -1, ErrorCode.UNSTABLE_OFFSET_COMMIT),
        (1, 6, ErrorCode.NONE),
    ]


# -- request checks (T56, T58-T61) ---------------------------------------------------------------------------


def test_t58_unknown_group_without_generation_becomes_a_simple_group() -> None:
    """T58: an unknown group with generation -1 is created as an empty classic group and the commit accepted."""
    ctx = CoordinatorTestContext()
    ok(ctx.txn_commit(group_id="fresh", producer_id=P1), ctx)
    assert ctx.state("fresh") is GroupState.EMPTY
    ctx.complete_txn(P1, commit=True, group_id="fresh")
    assert plain(ctx, "fresh") == 1


@pytest.mark.parametrize("version", [3, 4])
def test_t58_unknown_group_with_a_generation_is_illegal_generation_before_v6(version: int) -> None:
    """T58: an unknown group with a generation >= 0 (KIP-447 fields, v3+) is ILLEGAL_GENERATION (GROUP_ID_NOT_FOUND
    only from v6) and no group is created."""
    ctx = CoordinatorTestContext()
    reply = ctx.txn_commit(group_id="missing", generation_id=3, member_id="m", version=version)
    assert ctx.txn_errors(reply) == {TP: ErrorCode.ILLEGAL_GENERATION}
    assert ctx.coordinator.group("missing") is None


def test_t59_classic_group_member_and_generation_checks() -> None:
    """T59: a member of a classic group commits at its generation; an unknown member is UNKNOWN_MEMBER_ID, a
    wrong generation ILLEGAL_GENERATION (whole request); no member and generation -1 is accepted even for a
    Stable group (a producer without group metadata), which OffsetCommit would refuse."""
    ctx = CoordinatorTestContext()
    joined = ctx.join_with_n_members("g", 2)
    member = joined.member_ids[0]
    two = {TP: 1, ("topic", 1): 2}

    def errors(**kw: Any) -> set[ErrorCode]:
        return set(ctx.txn_errors(ctx.txn_commit(group_id="g", offsets=two, **kw)).values())

    assert errors(member_id=member, generation_id=joined.generation_id) == {ErrorCode.NONE}
    assert errors(member_id=member, generation_id=joined.generation_id + 1) == {ErrorCode.ILLEGAL_GENERATION}
    assert errors(member_id="ghost", generation_id=joined.generation_id) == {ErrorCode.UNKNOWN_MEMBER_ID}
    assert errors() == {ErrorCode.NONE}
    assert set(ctx.commit_errors(ctx.commit(group_id="g")).values()) == {ErrorCode.UNKNOWN_MEMBER_ID}


def test_t59_static_member_with_another_member_id_is_fenced() -> None:
    """T59: a static member's instance id with a member id that is not the registered one is FENCED_INSTANCE_ID."""
    ctx = CoordinatorTestContext()
    joined = ctx.join_with_n_members("g", 1, static=True)
    reply = ctx.txn_commit(
        group_id="g", member_id="other", group_instance_id="instance-0", generation_id=joined.generation_id
    )
    assert ctx.txn_errors(reply) == {TP: ErrorCode.FENCED_INSTANCE_ID}
    reply = ctx.txn_commit(
        group_id="g", member_id=joined.member_ids[0], group_instance_id="instance-0", generation_id=joined.generation_id
    )
    ok(reply, ctx)


def test_t59_completing_rebalance_does_not_refuse_and_the_session_is_not_touched() -> None:
    """T59: unlike OffsetCommit, a transactional commit in CompletingRebalance is not REBALANCE_IN_PROGRESS, and
    it does not count as a heartbeat."""
    ctx = CoordinatorTestContext()
    members, _leader, generation = completing(ctx)
    ok(ctx.txn_commit(group_id="g", member_id=members[0], generation_id=generation), ctx)
    joined = ctx.join_with_n_members("s", 1)
    member = joined.member_ids[0]
    deadline = ctx.heartbeat_deadline("s", member)
    ctx.sleep(1_000)
    ok(ctx.txn_commit(group_id="s", member_id=member, generation_id=joined.generation_id), ctx)
    assert ctx.heartbeat_deadline("s", member) == deadline


def test_t59_dead_group_is_coordinator_not_available() -> None:
    """T59: a Dead group (deleted, tombstones not yet durable) answers COORDINATOR_NOT_AVAILABLE."""
    ctx = CoordinatorTestContext()
    dead_group(ctx)
    reply = ctx.txn_commit(group_id="dead")
    assert ctx.txn_errors(reply) == {TP: ErrorCode.COORDINATOR_NOT_AVAILABLE}


def test_t60_t61_consumer_group_member_epoch_checks_with_v0_to_v4_codes() -> None:
    """T60/T61: a consumer group's member commits at its current epoch with any TxnOffsetCommit version; an
    unknown member is UNKNOWN_MEMBER_ID; a newer or older epoch is STALE_MEMBER_EPOCH, answered as
    ILLEGAL_GENERATION below v6; no member and epoch -1 is accepted into a group with members."""
    ctx = ConsumerGroupTestContext(topics={"foo": 2})
    assert ctx.join_cg(member_id="m1").member_epoch == 2
    offsets = {("foo", 0): 5}

    def errors(member_id: str, epoch: int, version: int = 4) -> set[ErrorCode]:
        reply = ctx.txn_commit(offsets=offsets, member_id=member_id, generation_id=epoch, version=version)
        return set(ctx.txn_errors(reply).values())

    assert errors("m1", 2, version=0) == {ErrorCode.NONE}
    assert errors("m1", 3) == {ErrorCode.ILLEGAL_GENERATION}
    assert errors("m1", 1) == {ErrorCode.ILLEGAL_GENERATION}
    assert errors("ghost", 2) == {ErrorCode.UNKNOWN_MEMBER_ID}
    assert errors("", -1) == {ErrorCode.NONE}
    ctx.complete_txn(P1, commit=True)
    assert ctx.committed_offset("group", "foo", 0) == 5
    assert ctx.coordinator.group("group") is None  # the consumer group holds the offsets, no classic group


def test_t61_oversized_metadata_fails_its_partition_alone() -> None:
    """T61: metadata longer than offset.metadata.max.bytes is OFFSET_METADATA_TOO_LARGE for that partition only;
    the others are written and pending."""
    ctx = CoordinatorTestContext(offset_metadata_max_bytes=4)
    request = ctx.txn_commit_request(offsets={TP: 1}, producer_id=P1, metadata="12345")
    request.topics[0].partitions.append(
        ctx.txn_commit_request(offsets={("topic", 1): 2}, metadata="1234").topics[0].partitions[0]
    )
    reply = ctx.txn_commit(request)
    assert ctx.txn_errors(reply) == {TP: ErrorCode.OFFSET_METADATA_TOO_LARGE, ("topic", 1): ErrorCode.NONE}
    ctx.complete_txn(P1, commit=True)
    assert ctx.fetched("group", {"topic": [0, 1]}) == {
        TP: (-1, -1, "", ErrorCode.NONE),
        ("topic", 1): (2, -1, "1234", ErrorCode.NONE),
    }


def test_t56_empty_group_id_and_unknown_partitions() -> None:
    """T56: an empty group id is INVALID_GROUP_ID for every partition; partitions the broker does not have are
    UNKNOWN_TOPIC_OR_PARTITION and lead the response (Kafka's API layer answers them); a request left with none
    never reaches the group."""
    ctx = CoordinatorTestContext(known_partition=lambda topic, partition: topic == "topic")
    assert ctx.txn_errors(ctx.txn_commit(group_id="")) == {TP: ErrorCode.INVALID_GROUP_ID}
    reply = ctx.txn_commit(offsets={("nope", 0): 1, TP: 2})
    assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in reply.value.topics] == [
        ("nope", [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]),
        ("topic", [(0, ErrorCode.NONE)]),
    ]
    ctx.txn_commit(group_id="never", offsets={("nope", 0): 1})
    assert ctx.coordinator.group("never") is None


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        (0, ErrorCode.COORDINATOR_NOT_AVAILABLE),
        (1, ErrorCode.COORDINATOR_NOT_AVAILABLE),
        (2, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),
    ],
)
def test_t56_loading_partition_is_coordinator_not_available_before_v2(version: int, expected: ErrorCode) -> None:
    """KafkaApis answers COORDINATOR_LOAD_IN_PROGRESS as COORDINATOR_NOT_AVAILABLE to TxnOffsetCommit v0-1."""
    ctx = CoordinatorTestContext(partitions=[])
    ctx.coordinator.begin_loading(ctx.coordinator.partition_for("group"))
    assert ctx.txn_errors(ctx.txn_commit(version=version)) == {TP: expected}


def test_t57_verification_seam_refuses_before_anything_is_written() -> None:
    """T57: the transaction coordinator's check that the producer's transaction includes the group's partition
    (AddOffsetsToTxn) is a seam; an error from it is every partition's answer and nothing is written."""
    calls: list[TxnOffsetVerification] = []

    def verify(request: TxnOffsetVerification) -> ErrorCode:
        calls.append(request)
        return ErrorCode.INVALID_TXN_STATE if request.producer_id == P2 else ErrorCode.NONE

    ctx = CoordinatorTestContext(verify_transaction=verify)
    partition = ctx.coordinator.partition_for("group")
    ok(ctx.txn_commit(producer_id=P1, producer_epoch=4, transactional_id="a"), ctx)
    before = ctx.store.appends
    reply = ctx.txn_commit(producer_id=P2, transactional_id="b", version=3)
    assert ctx.txn_errors(reply) == {TP: ErrorCode.INVALID_TXN_STATE}
    assert ctx.store.appends == before
    assert calls == [
        TxnOffsetVerification("a", P1, 4, "group", partition, 4),
        TxnOffsetVerification("b", P2, 0, "group", partition, 3),
    ]


# -- deletion, expiry (T65) ----------------------------------------------------------------------------------


def test_t65_offset_delete_tombstones_pending_only_partitions_and_the_marker_finds_nothing() -> None:
    """T65: OffsetDelete writes a tombstone for a partition that only has pending transactional offsets and
    removes them; the later COMMIT marker has nothing to materialise."""
    ctx = CoordinatorTestContext()
    ok(ctx.txn_commit(offsets={TP: 42}, producer_id=P1), ctx)
    response = ctx.offset_delete("group", {"topic": [0]}).value
    assert response.error_code == ErrorCode.NONE
    tombstones = [
        e for e in ctx.store.records(ctx.coordinator.partition_for("group")) if isinstance(e, CoordinatorRecord)
    ]
    assert tombstones[-1].is_tombstone
    assert stable(ctx) == (-1, ErrorCode.NONE)
    ctx.complete_txn(P1, commit=True)
    assert plain(ctx) == -1


def test_t65_delete_groups_erases_pending_transactional_offsets_too() -> None:
    """T65: DeleteGroups does not wait for open transactions (Kafka 4.4 deletes an Empty group regardless); its
    tombstones cover committed and pending-only partitions; a later COMMIT marker resurrects nothing."""
    ctx = CoordinatorTestContext()
    ctx.commit(group_id="group", offsets={TP: 1})
    ok(ctx.txn_commit(offsets={("topic", 1): 42}, producer_id=P1), ctx)
    result = ctx.delete_groups("group").value.results[0]
    assert result.error_code == ErrorCode.NONE
    records = [e for e in ctx.store.records(ctx.coordinator.partition_for("group")) if isinstance(e, CoordinatorRecord)]
    tombstoned = {
        (r.key.topic, r.key.partition) for r in records if r.is_tombstone and isinstance(r.key, OffsetCommitKey)
    }
    assert tombstoned == {TP, ("topic", 1)}
    assert ctx.coordinator.group("group") is None
    ctx.complete_txn(P1, commit=True)
    assert ctx.coordinator.group("group") is None
    assert plain(ctx, tp=("topic", 1)) == -1


def test_t65_expiry_keeps_offsets_with_open_transactions_and_their_group() -> None:
    """T65 (Kafka's cleanupExpiredOffsets): an expired offset whose partition has a pending transactional offset
    is not tombstoned, and a group with open transactions is not removed; once the marker settles them, the sweep
    expires as usual."""
    ctx = CoordinatorTestContext(offsets_retention_ms=1_000, offsets_retention_check_interval_ms=500)
    ctx.commit(group_id="group", offsets={TP: 1})
    ok(ctx.txn_commit(offsets={TP: 2, ("topic", 1): 3}, producer_id=P1), ctx)
    ctx.sleep(5_000)
    assert ctx.coordinator.group("group") is not None
    assert plain(ctx) == 1
    ctx.complete_txn(P1, commit=False)
    ctx.sleep(1_000)
    assert ctx.coordinator.group("group") is None


def test_t65_a_group_holding_only_pending_offsets_is_not_expired() -> None:
    """T65 (groupHasNoOffsets): a simple group created by a TxnOffsetCommit has no committed offsets, but its
    open transaction keeps it; after the COMMIT marker it has offsets like any other."""
    ctx = CoordinatorTestContext(offsets_retention_ms=1_000, offsets_retention_check_interval_ms=500)
    ok(ctx.txn_commit(offsets={TP: 2}, producer_id=P1), ctx)
    ctx.sleep(5_000)
    assert ctx.coordinator.group("group") is not None
    ctx.complete_txn(P1, commit=True)
    assert plain(ctx) == 2


# -- loading (T66) -------------------------------------------------------------------------------------------


def test_t66_load_replays_open_committed_and_aborted_transactions() -> None:
    """T66: a coordinator loading the partition rebuilds the state exactly: committed transactions materialised,
    aborted ones dropped, an open one pending (unstable) until its marker arrives after the load."""
    first = CoordinatorTestContext()
    first.commit(group_id="group", offsets={TP: 1, ("topic", 1): 1, ("topic", 2): 1})
    ok(first.txn_commit(offsets={TP: 10}, producer_id=P1), first)
    ok(first.txn_commit(offsets={("topic", 1): 20}, producer_id=P2), first)
    ok(first.txn_commit(offsets={("topic", 2): 30}, producer_id=3000), first)
    first.complete_txn(P1, commit=True)
    first.complete_txn(P2, commit=False)

    second = CoordinatorTestContext(store=first.store)
    assert second.fetched("group", {"topic": [0, 1, 2]}, require_stable=True) == {
        TP: (10, -1, "", ErrorCode.NONE),
        ("topic", 1): (1, -1, "", ErrorCode.NONE),
        ("topic", 2): (-1, -1, "", ErrorCode.UNSTABLE_OFFSET_COMMIT),
    }
    assert second.committed_offset("group", "topic", 2) == 1
    second.complete_txn(3000, commit=True)
    assert second.committed_offset("group", "topic", 2) == 30


def test_t66_load_keeps_log_order_between_plain_and_transactional_commits() -> None:
    """T64/T66: after a reload, a plain commit written after a pending transactional offset still wins when the
    COMMIT marker arrives, and a transactional offset written after a plain commit still wins."""
    first = CoordinatorTestContext()
    ok(first.txn_commit(offsets={TP: 10, ("topic", 1): 11}, producer_id=P1), first)
    first.commit(group_id="group", offsets={TP: 30})
    second = CoordinatorTestContext(store=first.store)
    second.complete_txn(P1, commit=True)
    assert second.fetched("group", {"topic": [0, 1]}) == {
        TP: (30, -1, "", ErrorCode.NONE),
        ("topic", 1): (11, -1, "", ErrorCode.NONE),
    }
    third = CoordinatorTestContext(store=second.store)
    assert third.fetched("group", {"topic": [0, 1]}) == second.fetched("group", {"topic": [0, 1]})


def test_t66_a_group_with_only_pending_offsets_is_loaded_as_an_empty_group() -> None:
    """T62/T66: a group whose only records are pending transactional offsets comes back (an empty classic group)
    with them pending."""
    first = CoordinatorTestContext()
    ok(first.txn_commit(group_id="txn-only", producer_id=P1), first)
    second = CoordinatorTestContext(store=first.store)
    assert second.state("txn-only") is GroupState.EMPTY
    assert stable(second, "txn-only") == (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)
    second.complete_txn(P1, commit=True, group_id="txn-only")
    assert plain(second, "txn-only") == 1


def test_t66_unload_and_reload_of_the_partition_keeps_pending_offsets() -> None:
    """T66: the same coordinator losing and regaining the partition rebuilds the pending offsets from the log, and
    the marker that arrives afterwards settles them; a marker while it is not owned is NOT_COORDINATOR."""
    ctx = CoordinatorTestContext()
    partition = ctx.coordinator.partition_for("group")
    ok(ctx.txn_commit(offsets={TP: 42}, producer_id=P1), ctx)
    ctx.coordinator.unload_partition(partition, ctx.now_ms)
    assert ctx.complete_txn(P1, commit=True).value == ErrorCode.NOT_COORDINATOR
    ctx.coordinator.begin_loading(partition)
    assert ctx.coordinator.load_partition(partition, ctx.store.records(partition), ctx.now_ms)
    assert stable(ctx) == (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)
    assert ctx.complete_txn(P1, commit=True).value == ErrorCode.NONE
    assert stable(ctx) == (42, ErrorCode.NONE)
