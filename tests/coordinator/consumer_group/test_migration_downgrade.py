"""Online downgrade (KIP-848 migration rules M30-M35, M38): when the last consumer-protocol member of a consumer
group leaves or is fenced and only classic members remain, the group converts back to a classic group (policy
`downgrade`/`bidirectional`, size within `group.max.size`), which then rebalances through the classic path."""

from __future__ import annotations

from coordinator.consumer_group.keys import session_key
from coordinator.consumer_group.records import assignment_partitions
from coordinator.state import GroupState
from protocol.errors import ErrorCode
from protocol.messages.consumer_group_metadata_key import ConsumerGroupMetadataKey
from protocol.messages.group_metadata_key import GroupMetadataKey
from protocol.messages.group_metadata_value import GroupMetadataValue
from protocol.messages.join_group import JoinGroupResponse
from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext, topic_id
from tests.coordinator.consumer_group.migration_helpers import (
    GROUP,
    ONE_EACH,
    ClassicGroupSetup,
    assigned_partitions,
    classic_subscription,
    log_of,
    mixed_group,
    stable_classic_group,
)


def test_m30_m33_m34_last_consumer_member_leaving_downgrades_the_group() -> None:
    """M30/M33/M34 (Kafka's testDowngradeMigrationPolicy end state): classic group at generation = the consumer
    group epoch, protocol type consumer and the members' protocol, each member's assignment = its target
    assignment; the offsets move along; the group prepares a rebalance, so a classic Heartbeat is told to rejoin."""
    ctx, setup = mixed_group()
    consumer = ctx.cg(GROUP)
    epoch, offsets = consumer.group_epoch, consumer.offsets
    left = ctx.cg_heartbeat(GROUP, "new", -1).value
    assert (left.error_code, left.member_id, left.member_epoch) == (ErrorCode.NONE, "new", -1)

    assert ctx.coordinator.consumer_group(GROUP) is None
    classic = ctx.group(GROUP)
    assert classic.generation_id == epoch and classic.protocol_type == "consumer"
    assert classic.protocol_name == "range" and classic.offsets is offsets
    assert classic.state is GroupState.PREPARING_REBALANCE
    assert set(classic.members) == set(setup.member_ids)
    assert assigned_partitions(classic.members[setup.member_ids[0]].assignment) == {"foo": [0]}
    assert assigned_partitions(classic.members[setup.member_ids[1]].assignment) == {"foo": [2]}
    assert ctx.heartbeat(GROUP, setup.member_ids[0], 1) == ErrorCode.ILLEGAL_GENERATION
    assert ctx.heartbeat(GROUP, setup.member_ids[0], epoch) == ErrorCode.REBALANCE_IN_PROGRESS


def test_m32_records_tombstone_the_consumer_group_then_write_one_classic_group_record() -> None:
    """M32: every member's three tombstones, the group-level tombstones (ConsumerGroupMetadata last of them),
    then ONE GroupMetadata record with every remaining member and its assignment."""
    ctx, setup = mixed_group()
    before = len(log_of(ctx))
    ctx.cg_heartbeat(GROUP, "new", -1)
    written = log_of(ctx)[before:]
    last = written[-1]
    assert isinstance(last.key, GroupMetadataKey) and isinstance(last.value, GroupMetadataValue)
    assert {m.member_id for m in last.value.members} == set(setup.member_ids)
    assert all(r.is_tombstone for r in written[:-1])
    assert isinstance(written[-2].key, ConsumerGroupMetadataKey)
    assert len(written) == 3 * 3 + 3 + 1


def test_m35_departed_consumer_member_then_gets_group_id_not_found() -> None:
    """M35: after the downgrade a ConsumerGroupHeartbeat with the old member id and a non-zero epoch is
    GROUP_ID_NOT_FOUND."""
    ctx, _ = mixed_group()
    ctx.cg_heartbeat(GROUP, "new", -1)
    assert ctx.cg_heartbeat(GROUP, "new", 2, owned={}).value.error_code == ErrorCode.GROUP_ID_NOT_FOUND


def test_m35_downgraded_classic_members_rebalance_to_a_stable_classic_group() -> None:
    """M34/M35: the classic members rejoin through the classic path and the group is Stable again."""
    ctx, setup = mixed_group()
    ctx.cg_heartbeat(GROUP, "new", -1)
    generation = ctx.group(GROUP).generation_id
    saved, ctx.auto_tick = ctx.auto_tick, False
    replies = [ctx.join(group_id=GROUP, member_id=m, topics=("foo",)) for m in setup.member_ids]
    ctx.auto_tick = saved
    ctx.tick()
    assert all(r.done and r.value.error_code == ErrorCode.NONE for r in replies)
    assert replies[0].value.generation_id == generation + 1
    leader = replies[0].value.leader
    for member_id in setup.member_ids:
        reply = ctx.sync(
            group_id=GROUP,
            member_id=member_id,
            generation_id=generation + 1,
            assignments={} if member_id == leader else None,
        )
        assert reply.value.error_code == ErrorCode.NONE
    assert ctx.state(GROUP) is GroupState.STABLE


def test_m38_policy_without_downgrade_keeps_the_consumer_group() -> None:
    """M38 (Kafka's testUpgradeMigrationPolicy): with `upgrade` the group stays a consumer group whose members
    are all classic, its epoch bumped: Assigning, as in Kafka's test, until a member's next request computes the
    new target."""
    ctx, setup = mixed_group(consumer_group_migration_policy="upgrade")
    epoch = ctx.cg(GROUP).group_epoch
    ctx.cg_heartbeat(GROUP, "new", -1)
    group = ctx.cg(GROUP)
    assert ctx.coordinator.group(GROUP) is None
    assert set(group.members) == set(setup.member_ids) and group.group_epoch == epoch + 1
    assert group.assignment_epoch == epoch
    assert group.state.value == "Assigning"


def test_m31_no_downgrade_when_the_classic_max_size_would_be_exceeded() -> None:
    """M31(4): more remaining classic members (3) than group.max.size (2): the members are just removed."""
    ctx, setup = mixed_group(group_max_size=2)
    third = ctx.join(group_id=GROUP, topics=("foo",), version=3, rebalance_timeout_ms=20_000).value
    assert third.error_code == ErrorCode.NONE
    ctx.cg_heartbeat(GROUP, "new", -1)
    assert ctx.coordinator.group(GROUP) is None
    assert set(ctx.cg(GROUP).members) == {*setup.member_ids, third.member_id}


def test_m30_session_expiry_of_the_last_consumer_member_downgrades() -> None:
    """M30: fencing by the session timer goes through the same check: the consumer member stops heartbeating,
    the classic members (rejoined at epoch 2) keep heartbeating and end up in a classic group."""
    ctx, setup = mixed_group()
    generations = {}
    for member_id in setup.member_ids:
        metadata = classic_subscription(("foo",), {})
        joined = ctx.join(group_id=GROUP, member_id=member_id, protocols=[("range", metadata)]).value
        assert ctx.sync(group_id=GROUP, member_id=member_id, generation_id=joined.generation_id).value.error_code == 0
        generations[member_id] = joined.generation_id
    for _ in range(6):
        ctx.sleep(8_000)
        for member_id in setup.member_ids:
            ctx.heartbeat(GROUP, member_id, generations[member_id])
    assert ctx.coordinator.consumer_group(GROUP) is None
    classic = ctx.group(GROUP)
    assert set(classic.members) == set(setup.member_ids)
    assert classic.generation_id == 2


def test_m30_static_temporary_leave_does_not_downgrade() -> None:
    """M30: a -2 leave keeps the static member (and the group's type)."""
    ctx = ConsumerGroupTestContext({"foo": 3}, consumer_group_migration_policy="bidirectional")
    stable_classic_group(ctx, ONE_EACH)
    ctx.join_cg(GROUP, "new", ["foo"], instance_id="static-new")
    response = ctx.cg_heartbeat(GROUP, "new", -2, instance_id="static-new").value
    assert response.error_code == ErrorCode.NONE
    assert ctx.coordinator.group(GROUP) is None and ctx.cg(GROUP).member("new") is not None


def test_m32_failed_downgrade_write_puts_the_consumer_group_back() -> None:
    """M32: the downgrade is part of the leave's write; if that write fails, the consumer group is served again
    as before the leave (the leaving member included) and no classic group remains."""
    ctx, setup = mixed_group()
    before = ctx.cg(GROUP)
    members = dict(before.members)
    ctx.store.fail_next(ErrorCode.KAFKA_STORAGE_ERROR)

    left = ctx.cg_heartbeat(GROUP, "new", -1).value

    assert left.error_code != ErrorCode.NONE
    assert ctx.coordinator.group(GROUP) is None
    assert ctx.coordinator.consumer_group(GROUP) is before and before.members == members
    assert ctx.heartbeat(GROUP, setup.member_ids[0], 1) == ErrorCode.REBALANCE_IN_PROGRESS
    assert ctx.coordinator.timer.deadline(session_key(GROUP, "new")) is not None


def _static_mixed_group(**config: object) -> tuple[ConsumerGroupTestContext, ClassicGroupSetup]:
    """Classic m0 (foo-0, foo-1) and m1 (foo-2), upgraded by the STATIC consumer member "new" (instance
    "static-new"); the target (epoch 2) gives every member one partition."""
    config.setdefault("consumer_group_migration_policy", "bidirectional")
    ctx = ConsumerGroupTestContext({"foo": 3, "bar": 1}, **config)
    setup = stable_classic_group(ctx, ONE_EACH, session_timeout_ms=10_000, rebalance_timeout_ms=20_000)
    ctx.join_cg(GROUP, "new", ["foo"], instance_id="static-new", rebalance_timeout_ms=20_000)
    return ctx, setup


def _classic_static_join(ctx: ConsumerGroupTestContext, topics: tuple[str, ...]) -> JoinGroupResponse:
    """The instance "static-new" comes back as a classic consumer (empty member id: it replaces the member)."""
    return ctx.join(
        group_id=GROUP,
        group_instance_id="static-new",
        protocols=[("range", classic_subscription(topics))],
        rebalance_timeout_ms=20_000,
    ).value


def _target_names(ctx: ConsumerGroupTestContext, member_id: str) -> dict[str, list[int]]:
    target = assignment_partitions(ctx.cg(GROUP).target_of(member_id))
    return {"foo": sorted(p for t, p in target if t == topic_id("foo"))}


def test_m27_static_member_replaced_by_classic_member_with_same_subscription_downgrades_to_stable() -> None:
    """M27 (Kafka 4.4 classicGroupJoinToConsumerGroup, testLastStaticConsumerProtocolMemberReplacedByClassic...):
    the last consumer-protocol member's instance rejoins with the classic protocol and the same subscription: the
    joiner takes the member's place, is reconciled to the current target (no epoch bump) and the group becomes a
    classic group at that epoch, Stable, each member holding its target; the joiner's SyncGroup gets its part."""
    ctx, setup = _static_mixed_group()
    epoch = ctx.cg(GROUP).group_epoch
    expected = {m: _target_names(ctx, m) for m in [*setup.member_ids, "new"]}
    before = len(log_of(ctx))

    joined = _classic_static_join(ctx, ("foo",))

    assert joined.error_code == ErrorCode.NONE
    assert joined.member_id not in ("", "new")
    assert (joined.generation_id, joined.protocol_type, joined.protocol_name) == (epoch, "consumer", "range")
    assert ctx.coordinator.consumer_group(GROUP) is None
    classic = ctx.group(GROUP)
    assert classic.state is GroupState.STABLE and classic.generation_id == epoch
    assert set(classic.members) == {*setup.member_ids, joined.member_id}
    assert classic.members[joined.member_id].group_instance_id == "static-new"
    for member_id in setup.member_ids:
        assert assigned_partitions(classic.members[member_id].assignment) == expected[member_id]
    assert assigned_partitions(classic.members[joined.member_id].assignment) == expected["new"]
    written = log_of(ctx)[before:]
    assert isinstance(written[-1].value, GroupMetadataValue) and written[-1].value.generation == epoch
    assert isinstance(written[-2].key, ConsumerGroupMetadataKey) and written[-2].is_tombstone
    synced = ctx.sync(
        group_id=GROUP, member_id=joined.member_id, generation_id=epoch, group_instance_id="static-new"
    ).value
    assert synced.error_code == ErrorCode.NONE
    assert assigned_partitions(synced.assignment) == expected["new"]
    assert ctx.heartbeat(GROUP, joined.member_id, epoch, group_instance_id="static-new") == ErrorCode.NONE
    assert ctx.state(GROUP) is GroupState.STABLE


def test_m27_static_member_replaced_by_classic_member_with_new_subscription_downgrades_and_rebalances() -> None:
    """M27: with a different subscription the group epoch moves past the target, so (Kafka 4.4) the joiner is not
    reconciled, the classic group takes the bumped epoch as generation and the stale target as assignments, and
    prepares a rebalance "with stale assignment"; the classic members are told to rejoin."""
    ctx, setup = _static_mixed_group()
    epoch = ctx.cg(GROUP).group_epoch
    expected_new = _target_names(ctx, "new")

    joined = _classic_static_join(ctx, ("foo", "bar"))

    assert joined.error_code == ErrorCode.NONE
    assert joined.generation_id == 0  # the replacing member's epoch: it was not reconciled
    assert ctx.coordinator.consumer_group(GROUP) is None
    classic = ctx.group(GROUP)
    assert classic.state is GroupState.PREPARING_REBALANCE and classic.generation_id == epoch + 1
    assert classic.rebalance_reason == f"Downgrade group {GROUP} from consumer to classic with stale assignment."
    assert assigned_partitions(classic.members[joined.member_id].assignment) == expected_new
    assert ctx.heartbeat(GROUP, setup.member_ids[1], epoch + 1) == ErrorCode.REBALANCE_IN_PROGRESS


def test_m27_no_downgrade_while_another_consumer_member_remains_or_the_policy_forbids_it() -> None:
    """M27: validateOnlineDowngradeWithReplacedMember fails (another consumer-protocol member; policy `upgrade`;
    more members than group.max.size): the classic joiner just replaces the static member in the consumer group."""
    for config, second_consumer in (
        ({}, True),
        ({"consumer_group_migration_policy": "upgrade"}, False),
        ({"group_max_size": 2}, False),
    ):
        ctx, _ = _static_mixed_group(**config)
        if second_consumer:
            ctx.join_cg(GROUP, "other", ["foo"])
        joined = _classic_static_join(ctx, ("foo",))
        assert joined.error_code == ErrorCode.NONE, config
        assert ctx.coordinator.group(GROUP) is None, config
        member = ctx.cg(GROUP).member(joined.member_id)
        assert member is not None and member.classic is not None and ctx.cg(GROUP).member("new") is None


def test_m27_failed_downgrade_write_puts_the_consumer_group_back() -> None:
    """M27: the downgrade is part of the JoinGroup's write; if it fails, the join gets the error and the consumer
    group is served again with the replaced consumer member, and no classic group remains."""
    ctx, _ = _static_mixed_group()
    group = ctx.cg(GROUP)
    members = dict(group.members)
    ctx.store.fail_next(ErrorCode.KAFKA_STORAGE_ERROR)

    joined = _classic_static_join(ctx, ("foo",))

    assert joined.error_code != ErrorCode.NONE
    assert ctx.coordinator.group(GROUP) is None
    assert ctx.coordinator.consumer_group(GROUP) is group and group.members == members
    assert ctx.coordinator.timer.deadline(session_key(GROUP, "new")) is not None


def test_m32_a_durable_downgrade_keeps_nothing_for_undoing_it() -> None:
    """What the coordinator keeps to undo a downgrade lives only until its write has an outcome: downgrades
    that succeed do not pile up in memory over the broker's lifetime."""
    ctx, _setup = mixed_group()
    ctx.store.auto_durable = False
    ctx.cg_heartbeat(GROUP, "new", -1)
    manager = ctx.coordinator._groups  # the only window on what is kept for undoing
    assert list(manager._downgrades) == [GROUP]
    assert ctx.store.flush() == 1
    assert manager._downgrades == {}
    assert ctx.group(GROUP) is not None
