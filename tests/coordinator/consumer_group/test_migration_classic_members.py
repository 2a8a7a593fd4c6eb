"""Classic-protocol members inside a consumer group (KIP-848 online migration; rules M12-M24, M26, M39): after an
upgrade the classic members keep consuming through JoinGroup/SyncGroup/Heartbeat/LeaveGroup, served from the
consumer group's state: generation = member epoch, assignments computed by the server-side assignor and handed
out in SyncGroup only once their previous owners released them."""

from __future__ import annotations

from coordinator.consumer_group.keys import classic_join_key, classic_sync_key, session_key
from coordinator.consumer_group.member_state import MemberState
from protocol.errors import ErrorCode
from protocol.messages.join_group import JoinGroupResponse
from protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from protocol.messages.sync_group import SyncGroupResponse
from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext, by_name, topic_id
from tests.coordinator.consumer_group.migration_helpers import (
    GROUP,
    assigned_partitions,
    classic_subscription,
    log_of,
    mixed_group,
)

FOO = topic_id("foo")


def _rejoin(
    ctx: ConsumerGroupTestContext,
    member_id: str,
    owned: dict[str, list[int]] | None = None,
    *,
    protocols: tuple[str, ...] = ("range",),
    version: int = 9,
    subscription_version: int = 3,
    **kw: object,
) -> JoinGroupResponse:
    metadata = classic_subscription(("foo",), owned, version=subscription_version)
    reply = ctx.join(
        group_id=GROUP,
        member_id=member_id,
        protocols=[(p, metadata) for p in protocols],
        rebalance_timeout_ms=20_000,
        version=version,
        **kw,
    )
    assert reply.done
    return reply.value


def _sync(ctx: ConsumerGroupTestContext, member_id: str, generation: int, **kw: object) -> SyncGroupResponse:
    reply = ctx.sync(group_id=GROUP, member_id=member_id, generation_id=generation, **kw)
    assert reply.done
    return reply.value


def test_m21_heartbeat_checks_generation_then_asks_a_lagging_member_to_rejoin() -> None:
    """M21/M11/M21b: Heartbeat with a generation other than the member epoch -> ILLEGAL_GENERATION; with its
    epoch, while the group epoch is ahead -> REBALANCE_IN_PROGRESS and the join timer (rebalance timeout) armed;
    the session is pushed by the classic session timeout."""
    ctx, setup = mixed_group()
    m0 = setup.member_ids[0]
    assert ctx.heartbeat(GROUP, m0, 2) == ErrorCode.ILLEGAL_GENERATION
    ctx.advance(1_000)
    assert ctx.heartbeat(GROUP, m0, 1) == ErrorCode.REBALANCE_IN_PROGRESS
    assert ctx.coordinator.timer.deadline(classic_join_key(GROUP, m0)) == ctx.now_ms + 20_000
    assert ctx.coordinator.timer.deadline(session_key(GROUP, m0)) == ctx.now_ms + 10_000


def test_m21_heartbeat_from_unknown_or_consumer_protocol_members_is_unknown_member() -> None:
    """M19/M21 lookup: unknown member id, and a member that does not use the classic protocol."""
    ctx, _ = mixed_group()
    assert ctx.heartbeat(GROUP, "nobody", 2) == ErrorCode.UNKNOWN_MEMBER_ID
    assert ctx.heartbeat(GROUP, "new", 2) == ErrorCode.UNKNOWN_MEMBER_ID


def test_m14_new_dynamic_member_gets_member_id_required_and_nothing_is_stored() -> None:
    """M14: JoinGroup v4+ with an empty member id: MEMBER_ID_REQUIRED with a Kafka UUID (22 characters, as Kafka
    4.4 answers), no member added, nothing written."""
    ctx, _ = mixed_group()
    members, appends = set(ctx.cg(GROUP).members), ctx.store.appends
    response = _rejoin(ctx, "")
    assert response.error_code == ErrorCode.MEMBER_ID_REQUIRED
    assert len(response.member_id) == 22
    assert set(ctx.cg(GROUP).members) == members and ctx.store.appends == appends


def test_m15_protocol_type_and_unsupported_protocols_are_inconsistent() -> None:
    """M15 (M21b's error cases): protocol type "connect", or only protocols that not every classic member
    supports -> INCONSISTENT_GROUP_PROTOCOL with an empty member id."""
    ctx, _ = mixed_group()
    connect = ctx.join(group_id=GROUP, member_id="x", protocol_type="connect", rebalance_timeout_ms=20_000)
    assert connect.value.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL and connect.value.member_id == ""
    roundrobin = _rejoin(ctx, "x", protocols=("roundrobin",))
    assert roundrobin.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_m39_disabled_policy_rejects_classic_members_of_a_consumer_group() -> None:
    """M39 (verified on Kafka 4.4.0: a classic JoinGroup into a non-empty consumer group with the policy
    `disabled` is INCONSISTENT_GROUP_PROTOCOL with member id "", v3 and v9 alike; with `upgrade` it is accepted)."""
    ctx = ConsumerGroupTestContext({"foo": 3}, consumer_group_migration_policy="disabled")
    ctx.join_cg(GROUP, "new", ["foo"])
    for version in (3, 9):
        response = _rejoin(ctx, "", version=version)
        assert response.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL and response.member_id == ""
    upgrade = ConsumerGroupTestContext({"foo": 3}, consumer_group_migration_policy="upgrade")
    upgrade.join_cg(GROUP, "new", ["foo"])
    assert _rejoin(upgrade, "", version=3).error_code == ErrorCode.NONE


def test_m17_eager_rejoin_is_answered_at_once_with_the_member_epoch() -> None:
    """M17/M21b (eager client: owns nothing when it rejoins): the JoinGroup is answered after its records with
    generation = the new epoch, protocol "range", no leader, no members; SyncGroup at that generation returns the
    member's current partitions; its Heartbeat is then NONE."""
    ctx, setup = mixed_group()
    m0 = setup.member_ids[0]
    joined = _rejoin(ctx, m0, {})
    assert joined.error_code == ErrorCode.NONE
    assert (joined.member_id, joined.generation_id, joined.protocol_type, joined.protocol_name) == (
        m0,
        2,
        "consumer",
        "range",
    )
    assert joined.leader == "" and joined.members == [] and not joined.skip_assignment
    member = ctx.cg(GROUP).member(m0)
    assert member is not None and member.member_epoch == 2
    synced = _sync(ctx, m0, 2)
    assert synced.error_code == ErrorCode.NONE and synced.protocol_name == "range"
    held = {p for t, p in member.assignment.assigned_partitions}
    assert assigned_partitions(synced.assignment) == ({"foo": sorted(held)} if held else {})
    assert ctx.heartbeat(GROUP, m0, 2) == ErrorCode.NONE


def test_m24_cooperative_rejoin_revokes_first_then_reaches_the_new_epoch() -> None:
    """M21b/M24 (cooperative client, still owning foo-0 and foo-1): the first JoinGroup keeps generation 1 while
    a partition is to be revoked; SyncGroup(1) hands out the reduced assignment; Heartbeat(1) asks it to rejoin;
    the second JoinGroup (owning the kept partitions only) reaches generation 2."""
    ctx, setup = mixed_group()
    m0 = setup.member_ids[0]
    first = _rejoin(ctx, m0, {"foo": [0, 1]})
    member = ctx.cg(GROUP).member(m0)
    assert member is not None and member.state is MemberState.UNREVOKED_PARTITIONS  # target: foo-0 (uniform)
    assert first.generation_id == 1
    assert member.assignment.partitions_pending_revocation == {(FOO, 1)}
    assert assigned_partitions(_sync(ctx, m0, 1).assignment) == {"foo": [0]}
    assert ctx.heartbeat(GROUP, m0, 1) == ErrorCode.REBALANCE_IN_PROGRESS
    second = _rejoin(ctx, m0, {"foo": [0]})
    assert second.generation_id == 2
    assert assigned_partitions(_sync(ctx, m0, 2).assignment) == {"foo": [0]}
    new = ctx.cg_heartbeat(GROUP, "new", 2, owned={}).value
    assert new.error_code == ErrorCode.NONE
    assert by_name(new, "foo") == {"foo": [1]}  # released by m0, now the new member's


def test_m19_sync_group_checks() -> None:
    """M19: ILLEGAL_GENERATION when the generation is not the member epoch; UNKNOWN_MEMBER_ID for unknown and
    consumer-protocol members; INCONSISTENT_GROUP_PROTOCOL for another protocol name; REBALANCE_IN_PROGRESS for a
    member whose epoch lags the group epoch (not revoking), with its join timer armed."""
    ctx, setup = mixed_group()
    m0 = setup.member_ids[0]
    assert _sync(ctx, m0, 5).error_code == ErrorCode.ILLEGAL_GENERATION
    assert _sync(ctx, "nobody", 1).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert _sync(ctx, "new", 2).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert _sync(ctx, m0, 1, protocol_name="roundrobin").error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert _sync(ctx, m0, 1).error_code == ErrorCode.REBALANCE_IN_PROGRESS
    assert ctx.coordinator.timer.deadline(classic_join_key(GROUP, m0)) is not None


def test_m20_sync_assignment_is_encoded_in_the_members_consumer_protocol_version() -> None:
    """M20: the assignment bytes use the version of the member's subscription (v0 here)."""
    ctx, setup = mixed_group()
    m1 = setup.member_ids[1]
    joined = _rejoin(ctx, m1, None, subscription_version=0)
    synced = _sync(ctx, m1, joined.generation_id)
    assert synced.error_code == ErrorCode.NONE
    assert synced.assignment[:2] == b"\x00\x00"


def test_m14_m17_new_classic_member_joins_the_consumer_group() -> None:
    """M14/M17: JoinGroup v3 (no MEMBER_ID_REQUIRED) gets a UUID member id and joins at the new epoch; it is a
    classic member of the consumer group."""
    ctx, _ = mixed_group()
    joined = _rejoin(ctx, "", version=3)
    assert joined.error_code == ErrorCode.NONE and len(joined.member_id) == 22
    member = ctx.cg(GROUP).member(joined.member_id)
    assert member is not None and member.uses_classic_protocol
    assert joined.generation_id == member.member_epoch == ctx.cg(GROUP).group_epoch


def test_m22_leave_group_fences_classic_members_with_one_epoch_bump() -> None:
    """M22: LeaveGroup for two classic members removes both with their tombstones and ONE group-epoch bump; an
    unknown member gets UNKNOWN_MEMBER_ID in its own entry."""
    ctx, setup = mixed_group()
    epoch = ctx.cg(GROUP).group_epoch
    response = ctx.leave(GROUP, (setup.member_ids[0], None), (setup.member_ids[1], None), ("nobody", None))
    assert response.error_code == ErrorCode.NONE
    assert [m.error_code for m in response.members] == [
        ErrorCode.NONE,
        ErrorCode.NONE,
        ErrorCode.UNKNOWN_MEMBER_ID,
    ]
    group = ctx.cg(GROUP)
    assert set(group.members) == {"new"} and group.group_epoch == epoch + 1


def test_m22_leave_group_is_answered_once_its_records_are_durable_and_a_failed_write_changes_nothing() -> None:
    """M22: a LeaveGroup from a consumer group writes the members' tombstones and the epoch bump, and is answered
    only once they are durable (nothing acknowledged is lost); a failed write answers the mapped error and puts
    the members back."""
    ctx, setup = mixed_group()
    m0 = setup.member_ids[0]
    epoch = ctx.cg(GROUP).group_epoch
    ctx.store.auto_durable = False
    request = LeaveGroupRequest(group_id=GROUP, members=[MemberIdentity(member_id=m0)])
    pending = ctx.coordinator.leave_group(ctx.ctx(5), request, ctx.now_ms)
    assert not pending.done
    ctx.store.flush()
    assert pending.done and pending.value.error_code == ErrorCode.NONE
    assert ctx.cg(GROUP).member(m0) is None

    m1 = setup.member_ids[1]
    failing = ctx.coordinator.leave_group(
        ctx.ctx(5), LeaveGroupRequest(group_id=GROUP, members=[MemberIdentity(member_id=m1)]), ctx.now_ms
    )
    ctx.store.fail_pending(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    assert failing.value.error_code == ErrorCode.NOT_COORDINATOR
    group = ctx.cg(GROUP)
    assert group.member(m1) is not None and group.group_epoch == epoch + 1


def test_m18_m23_classic_member_that_does_not_sync_in_time_is_fenced() -> None:
    """M18/M23: after its JoinGroup the member has its rebalance timeout to send SyncGroup."""
    ctx, setup = mixed_group()
    m0 = setup.member_ids[0]
    _rejoin(ctx, m0, {})
    assert ctx.coordinator.timer.deadline(classic_sync_key(GROUP, m0)) == ctx.now_ms + 20_000
    ctx.sleep(9_000)
    assert ctx.heartbeat(GROUP, m0, 2) == ErrorCode.NONE  # heartbeats do not replace the SyncGroup
    ctx.sleep(11_000)
    assert ctx.cg(GROUP).member(m0) is None


def test_m18_m23_classic_member_told_to_rejoin_that_does_not_is_fenced() -> None:
    """M18/M23: the join timer armed by REBALANCE_IN_PROGRESS fences a member that keeps heartbeating without
    rejoining; a JoinGroup in time cancels it."""
    ctx, setup = mixed_group()
    m0, m1 = setup.member_ids
    assert ctx.heartbeat(GROUP, m0, 1) == ErrorCode.REBALANCE_IN_PROGRESS
    assert ctx.heartbeat(GROUP, m1, 1) == ErrorCode.REBALANCE_IN_PROGRESS
    ctx.sleep(5_000)
    generation = _rejoin(ctx, m1, {}).generation_id
    assert ctx.coordinator.timer.deadline(classic_join_key(GROUP, m1)) is None
    assert _sync(ctx, m1, generation).error_code == ErrorCode.NONE
    for _ in range(4):
        ctx.sleep(4_000)
        ctx.heartbeat(GROUP, m0, 1)
        ctx.heartbeat(GROUP, m1, generation)
    assert ctx.cg(GROUP).member(m0) is None
    assert ctx.cg(GROUP).member(m1) is not None


def test_m17_failed_join_write_restores_the_group() -> None:
    """M17: the JoinGroup is answered after its records; if they fail, the member is as before and the answer
    carries the error."""
    ctx, setup = mixed_group()
    m0 = setup.member_ids[0]
    before = ctx.cg(GROUP).member(m0)
    ctx.store.fail_next(ErrorCode.KAFKA_STORAGE_ERROR)
    response = _rejoin(ctx, m0, {})
    assert response.error_code not in (ErrorCode.NONE, ErrorCode.KAFKA_STORAGE_ERROR)
    assert ctx.cg(GROUP).member(m0) == before


def test_m26_consumer_group_heartbeat_makes_a_classic_member_a_consumer_member() -> None:
    """M26: any ConsumerGroupHeartbeat for a member clears its ClassicMemberMetadata (written in its record)."""
    ctx, setup = mixed_group()
    m1 = setup.member_ids[1]
    before = len(log_of(ctx))
    response = ctx.cg_heartbeat(GROUP, m1, 1, owned={"foo": [2]}).value
    assert response.error_code == ErrorCode.NONE, response
    member = ctx.cg(GROUP).member(m1)
    assert member is not None and not member.uses_classic_protocol
    assert any(getattr(r.value, "classic_member_metadata", "x") is None for r in log_of(ctx)[before:])


def test_describe_v1_member_type_tells_classic_members_from_consumer_members() -> None:
    """ConsumerGroupDescribe v1's MemberType (KIP-1099, Kafka 4.4): 0 for a classic member of a consumer group, 1
    for a consumer-protocol member (what the Java admin client reports as `upgraded`)."""
    ctx, setup = mixed_group()
    (described,) = ctx.cg_describe(GROUP)
    types = {m.member_id: m.member_type for m in described.members}
    assert types == {**{member_id: 0 for member_id in setup.member_ids}, "new": 1}
