"""Offsets and restarts around online migration (KIP-848 rules M25, M43, K56): a classic member of a consumer group
commits through the consumer group's checks with its generation = member epoch and any OffsetCommit version, and
a group that changed type comes back from the log as the type it had last, with its members and offsets."""

from __future__ import annotations

from coordinator.consumer_group.keys import revocation_key
from coordinator.consumer_group.member_state import MemberState
from coordinator.state import GroupState
from protocol.errors import ErrorCode
from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext
from tests.coordinator.consumer_group.migration_helpers import GROUP, classic_subscription, mixed_group


def _restarted(ctx: ConsumerGroupTestContext, **config: object) -> ConsumerGroupTestContext:
    """A new coordinator over the same log and topics, at the same time (a broker restart)."""
    config.setdefault("consumer_group_migration_policy", "bidirectional")
    return ConsumerGroupTestContext({"foo": 3}, store=ctx.store, start_ms=ctx.now_ms, **config)


def _commit(ctx: ConsumerGroupTestContext, member_id: str, generation: int, version: int) -> ErrorCode:
    reply = ctx.commit(
        group_id=GROUP, member_id=member_id, generation_id=generation, offsets={("foo", 0): 11}, version=version
    )
    return ctx.commit_errors(reply)[("foo", 0)]


def test_m25_classic_member_commits_at_its_member_epoch_with_a_classic_offset_commit_version() -> None:
    """M25: the generation a classic member commits with is checked against its member epoch (not the group
    epoch, which the joining consumer member moved on), and old OffsetCommit versions are fine for it."""
    ctx, setup = mixed_group()
    m0 = setup.member_ids[0]
    epoch = ctx.cg(GROUP).members[m0].member_epoch
    assert epoch == setup.generation_id < ctx.cg(GROUP).group_epoch

    assert _commit(ctx, m0, epoch, version=2) == ErrorCode.NONE
    assert _commit(ctx, m0, epoch, version=8) == ErrorCode.NONE
    assert ctx.cg(GROUP).offsets.get("foo", 0).offset == 11  # type: ignore[union-attr]
    assert ctx.coordinator.group(GROUP) is None  # the commit did not make a classic group beside it


def test_m25_classic_member_committing_with_another_generation_gets_illegal_generation() -> None:
    """M25: a classic client reacts to ILLEGAL_GENERATION by rejoining; it never hears STALE_MEMBER_EPOCH."""
    ctx, setup = mixed_group()
    m0 = setup.member_ids[0]
    group_epoch = ctx.cg(GROUP).group_epoch
    assert _commit(ctx, m0, group_epoch, version=8) == ErrorCode.ILLEGAL_GENERATION
    assert _commit(ctx, m0, group_epoch, version=9) == ErrorCode.ILLEGAL_GENERATION
    assert ctx.cg(GROUP).offsets.get("foo", 0) is None


def test_k56_an_upgraded_group_reloads_as_a_consumer_group_with_its_classic_members() -> None:
    """K56/M8: after a restart the mixed group is a consumer group again, its classic members with their classic
    protocols and epochs, and one of them carries on: its Heartbeat is told to rejoin, its JoinGroup joins at
    the group epoch."""
    before, setup = mixed_group()
    old = before.cg(GROUP)
    ctx = _restarted(before)
    group = ctx.cg(GROUP)
    assert ctx.coordinator.group(GROUP) is None
    assert (group.group_epoch, group.assignment_epoch) == (old.group_epoch, old.assignment_epoch)
    assert group.members == old.members
    m0 = setup.member_ids[0]
    assert group.members[m0].classic is not None and group.members[m0].classic == old.members[m0].classic
    assert ctx.heartbeat(GROUP, m0, setup.generation_id) == ErrorCode.REBALANCE_IN_PROGRESS
    assert group.members[m0].state in (MemberState.STABLE, MemberState.UNREVOKED_PARTITIONS)


def test_k56_a_downgraded_group_reloads_as_a_classic_group() -> None:
    """K56/M32: the consumer group's tombstones precede the classic group's record, so a restart after a
    downgrade serves the classic group (generation = the last group epoch) and no consumer group."""
    before, setup = mixed_group()
    epoch = before.cg(GROUP).group_epoch
    before.cg_heartbeat(GROUP, "new", -1)
    assert before.group(GROUP).generation_id == epoch
    ctx = _restarted(before)
    assert ctx.coordinator.consumer_group(GROUP) is None
    classic = ctx.group(GROUP)
    assert classic.generation_id == epoch and classic.protocol_type == "consumer"
    assert set(classic.members) == set(setup.member_ids)
    assert classic.state is not GroupState.DEAD


def test_m43_offsets_of_a_simple_group_belong_to_the_consumer_group_that_replaced_it() -> None:
    """M43: the log holds a simple group's offsets, then the records of the consumer group that replaced it
    (M40) under the same id; on load the consumer group wins and holds those offsets, no classic group is made."""
    before = ConsumerGroupTestContext({"foo": 3}, consumer_group_migration_policy="bidirectional")
    before.commit(group_id=GROUP, offsets={("foo", 1): 5})
    assert before.group(GROUP).protocol_type is None
    before.join_cg(GROUP, "m1", ["foo"])
    ctx = _restarted(before)
    assert ctx.coordinator.group(GROUP) is None
    group = ctx.cg(GROUP)
    assert list(group.members) == ["m1"]
    assert group.offsets.get("foo", 1).offset == 5  # type: ignore[union-attr]


def test_k57_classic_member_owing_revocations_gets_its_rebalance_timer_on_load() -> None:
    """K57 (Kafka 4.4 GroupMetadataManager.onLoaded): every loaded member of a consumer group gets a session timer,
    and one in UNREVOKED_PARTITIONS also its rebalance (revocation) timer, whatever its protocol: a classic member
    that still owes a partition after the restart is fenced when its rebalance timeout runs out."""
    before, setup = mixed_group()
    m0 = setup.member_ids[0]
    rejoined = before.join(
        group_id=GROUP,
        member_id=m0,
        protocols=[("range", classic_subscription(("foo",), {"foo": [0, 1]}))],
        rebalance_timeout_ms=20_000,
    ).value
    assert rejoined.error_code == ErrorCode.NONE
    assert before.cg(GROUP).members[m0].state is MemberState.UNREVOKED_PARTITIONS
    ctx = _restarted(before)
    epoch = ctx.cg(GROUP).members[m0].member_epoch

    assert ctx.coordinator.timer.deadline(revocation_key(GROUP, m0)) == ctx.now_ms + 20_000
    assert ctx.coordinator.timer.deadline(revocation_key(GROUP, setup.member_ids[1])) is None
    ctx.sleep(20_000)
    assert ctx.cg(GROUP).member(m0) is None
    assert ctx.events.of("member.expired")[0]["member"] == m0
    assert epoch == setup.generation_id
