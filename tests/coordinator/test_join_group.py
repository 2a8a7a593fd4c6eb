"""JoinGroup: rules #6-#19."""

from __future__ import annotations

from coordinator.state import GroupState
from protocol.errors import ErrorCode
from tests.coordinator.harness import CoordinatorTestContext, subscription

NONE = ErrorCode.NONE


def code(reply: object) -> ErrorCode:
    return ErrorCode(reply.value.error_code)  # type: ignore[attr-defined]


# -- #6 ------------------------------------------------------------------------------------------------------


def test_rule_06_session_timeout_outside_bounds_is_invalid_and_echoes_member_id() -> None:
    ctx = CoordinatorTestContext()
    for timeout in (5_999, 1_800_001):
        reply = ctx.join(group_id="g", member_id="someone", session_timeout_ms=timeout)
        assert code(reply) is ErrorCode.INVALID_SESSION_TIMEOUT
        assert reply.value.member_id == "someone"
    assert ctx.coordinator.group("g") is None
    for timeout in (6_000, 1_800_000):
        assert code(ctx.join_dynamic(f"g{timeout}", session_timeout_ms=timeout)) is NONE


# -- #7 ------------------------------------------------------------------------------------------------------


def test_rule_07_join_group_v0_uses_session_timeout_as_rebalance_timeout() -> None:
    ctx = CoordinatorTestContext()
    reply = ctx.join(group_id="g", version=0, session_timeout_ms=7_000, rebalance_timeout_ms=-1)
    assert code(reply) is NONE
    member = ctx.group("g").member(reply.value.member_id)
    assert member.rebalance_timeout_ms == 7_000
    reply1 = ctx.join(group_id="g1", version=1, session_timeout_ms=7_000, rebalance_timeout_ms=60_000)
    assert ctx.group("g1").member(reply1.value.member_id).rebalance_timeout_ms == 60_000


# -- #8 ------------------------------------------------------------------------------------------------------


def test_rule_08_group_is_created_only_for_an_empty_member_id() -> None:
    ctx = CoordinatorTestContext()
    reply = ctx.join(group_id="g", member_id="made-up")
    assert code(reply) is ErrorCode.UNKNOWN_MEMBER_ID
    assert reply.value.member_id == "made-up"
    assert ctx.coordinator.group("g") is None
    assert code(ctx.join_dynamic("g")) is NONE
    assert ctx.state("g") is GroupState.COMPLETING_REBALANCE


# -- #9 ------------------------------------------------------------------------------------------------------


def test_rule_09_v4_new_dynamic_member_gets_member_id_required_then_joins_with_it() -> None:
    ctx = CoordinatorTestContext()
    first = ctx.join(group_id="g", version=4, client_id="my-client", session_timeout_ms=7_000)
    assert code(first) is ErrorCode.MEMBER_ID_REQUIRED
    member_id = first.value.member_id
    assert member_id.startswith("my-client-") and len(member_id) == len("my-client-") + 36
    group = ctx.group("g")
    assert group.pending_members == {member_id}
    assert ctx.state("g") is GroupState.EMPTY
    ctx.assert_heartbeat_deadline("g", member_id, 7_000)  # the pending id expires after the session timeout
    second = ctx.join(group_id="g", version=4, member_id=member_id, session_timeout_ms=7_000)
    assert code(second) is NONE and second.value.member_id == member_id
    assert group.pending_members == set()


def test_rule_09_pending_member_id_expires_after_session_timeout() -> None:
    ctx = CoordinatorTestContext()
    member_id = ctx.join(group_id="g", version=5, session_timeout_ms=7_000).value.member_id
    ctx.sleep(6_999)
    assert ctx.group("g").is_pending_member(member_id)
    ctx.sleep(1)
    assert not ctx.group("g").is_pending_member(member_id)
    assert ctx.heartbeat_deadline("g", member_id) is None
    assert "member.expired" in ctx.events.names()
    late = ctx.join(group_id="g", version=5, member_id=member_id, session_timeout_ms=7_000)
    assert code(late) is ErrorCode.UNKNOWN_MEMBER_ID


def test_rule_09_old_versions_and_static_members_are_admitted_straight_away() -> None:
    ctx = CoordinatorTestContext()
    old = ctx.join(group_id="g", version=3, client_id="old-client")
    assert code(old) is NONE and old.value.member_id.startswith("old-client-")
    static = ctx.join(group_id="s", version=5, group_instance_id="instance-a")
    assert code(static) is NONE and static.value.member_id.startswith("instance-a-")


# -- #10 -----------------------------------------------------------------------------------------------------


def test_rule_10_empty_group_needs_a_protocol_type_and_protocols() -> None:
    ctx = CoordinatorTestContext()
    no_type = ctx.join_dynamic("g", protocol_type="")
    assert code(no_type) is ErrorCode.INCONSISTENT_GROUP_PROTOCOL and no_type.value.member_id == ""
    no_protocols = ctx.join_dynamic("g", protocols=[])
    assert code(no_protocols) is ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_rule_10_joiner_must_match_protocol_type_and_share_a_protocol_with_every_member() -> None:
    ctx = CoordinatorTestContext()
    ctx.join_with_n_members("g", 2)
    wrong_type = ctx.join_dynamic("g", protocol_type="connect")
    assert code(wrong_type) is ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    no_common = ctx.join_dynamic("g", protocols=[("roundrobin", b"x")])
    assert code(no_common) is ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert ctx.state("g") is GroupState.STABLE
    shares_one = ctx.join_dynamic("g", protocols=[("roundrobin", b"x"), ("range", subscription("topic"))])
    assert not shares_one.done  # accepted: parked in the new rebalance
    assert ctx.state("g") is GroupState.PREPARING_REBALANCE


# -- #11 -----------------------------------------------------------------------------------------------------


def test_rule_11_group_max_size_rejects_new_members_of_a_full_stable_group() -> None:
    ctx = CoordinatorTestContext(group_max_size=2)
    ctx.join_with_n_members("g", 2)
    reply = ctx.join_dynamic("g")
    assert code(reply) is ErrorCode.GROUP_MAX_SIZE_REACHED
    assert reply.value.member_id == ""
    assert len(ctx.group("g").members) == 2 and ctx.state("g") is GroupState.STABLE


def test_rule_11_group_max_size_counts_awaiting_members_during_preparing_rebalance() -> None:
    ctx = CoordinatorTestContext(group_max_size=2)
    g = ctx.join_with_n_members("g", 2)
    follower = g.followers[0]
    leader_rejoin = ctx.join(group_id="g", member_id=g.leader_id)  # awaiting: 1 < 2
    newcomer = ctx.join_dynamic("g")  # awaiting: 1 < 2, accepted
    assert not leader_rejoin.done and not newcomer.done
    late = ctx.join(group_id="g", member_id=follower)  # awaiting: 2, not yet awaiting itself -> out
    assert code(late) is ErrorCode.GROUP_MAX_SIZE_REACHED and late.value.member_id == ""
    assert not ctx.group("g").has_member(follower)
    assert ctx.heartbeat_deadline("g", follower) is None
    # With the follower gone, everyone left has rejoined: the join completes.
    assert leader_rejoin.done and newcomer.done
    assert ctx.state("g") is GroupState.COMPLETING_REBALANCE
    assert sorted(ctx.group("g").members) == sorted([g.leader_id, newcomer.value.member_id])


# -- #12 -----------------------------------------------------------------------------------------------------


def test_rule_12_first_join_of_an_empty_group_waits_the_initial_delay() -> None:
    ctx = CoordinatorTestContext(initial_rebalance_delay_ms=3_000)
    reply = ctx.join_dynamic("g")
    assert not reply.done
    assert ctx.join_deadline("g") == 3_000
    ctx.sleep(2_999)
    assert not reply.done  # never completed early, although every member has joined
    ctx.sleep(1)
    assert code(reply) is NONE and reply.value.generation_id == 1


def test_rule_12_initial_delay_of_zero_answers_at_once() -> None:
    ctx = CoordinatorTestContext(initial_rebalance_delay_ms=0)
    reply = ctx.join_dynamic("g")
    assert reply.done and code(reply) is NONE and ctx.now_ms == 0


def test_rule_12_initial_delay_is_extended_while_members_arrive_capped_by_rebalance_timeout() -> None:
    ctx = CoordinatorTestContext(initial_rebalance_delay_ms=3_000)
    replies = [ctx.join_dynamic("g", rebalance_timeout_ms=10_000)]
    assert ctx.join_deadline("g") == 3_000  # remaining budget: 10000 - 3000 = 7000
    ctx.sleep(1_000)
    replies.append(ctx.join_dynamic("g", rebalance_timeout_ms=10_000))
    ctx.sleep_until(3_000)
    assert ctx.join_deadline("g") == 6_000  # + min(3000, 7000); remaining 4000
    ctx.sleep_until(5_000)
    replies.append(ctx.join_dynamic("g", rebalance_timeout_ms=10_000))
    ctx.sleep_until(6_000)
    assert ctx.join_deadline("g") == 9_000  # + min(3000, 4000); remaining 1000
    ctx.sleep_until(8_000)
    replies.append(ctx.join_dynamic("g", rebalance_timeout_ms=10_000))
    ctx.sleep_until(9_000)
    assert ctx.join_deadline("g") == 10_000  # + min(3000, 1000); remaining 0
    ctx.sleep_until(9_500)
    replies.append(ctx.join_dynamic("g", rebalance_timeout_ms=10_000))
    assert not any(r.done for r in replies)
    ctx.sleep_until(10_000)  # no budget left: complete although a member just arrived
    assert all(r.done and code(r) is NONE for r in replies)
    assert len(ctx.group("g").members) == 5


def test_rule_12_without_new_members_the_initial_delay_is_not_extended() -> None:
    ctx = CoordinatorTestContext(initial_rebalance_delay_ms=3_000)
    reply = ctx.join_dynamic("g", rebalance_timeout_ms=60_000)
    ctx.sleep(3_000)
    assert reply.done


# -- #13 -----------------------------------------------------------------------------------------------------


def test_rule_13_join_completes_once_all_known_members_rejoined() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 3)
    replies = [ctx.join(group_id="g", member_id=m) for m in g.member_ids]
    assert all(r.done for r in replies)
    responses = [r.value for r in replies]
    assert {r.generation_id for r in responses} == {g.generation_id + 1}
    assert {r.leader for r in responses} == {g.leader_id}
    assert {r.protocol_name for r in responses} == {"range"}
    leader_response = responses[g.member_ids.index(g.leader_id)]
    assert [m.member_id for m in leader_response.members] == g.member_ids
    assert leader_response.members[0].metadata == subscription("topic")
    assert all(r.members == [] for r in responses if r.member_id != g.leader_id)


def test_rule_13_pending_member_ids_block_completion_until_they_join_or_expire() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 1, session_timeout_ms=30_000, rebalance_timeout_ms=60_000)
    pending = ctx.join(group_id="g", version=5, session_timeout_ms=7_000)
    assert code(pending) is ErrorCode.MEMBER_ID_REQUIRED
    rejoin = ctx.join(group_id="g", member_id=g.leader_id, session_timeout_ms=30_000, rebalance_timeout_ms=60_000)
    assert not rejoin.done  # leader has rejoined, but a member id is still pending
    ctx.sleep(7_000)  # the pending id expires: nothing else to wait for
    assert rejoin.done and code(rejoin) is NONE


def test_rule_13_at_rebalance_timeout_dynamic_laggards_are_dropped_static_ones_kept() -> None:
    ctx = CoordinatorTestContext()
    dyn = ctx.join_with_n_members("g", 2, rebalance_timeout_ms=20_000, session_timeout_ms=30_000)
    static = ctx.join(
        group_id="g", version=5, group_instance_id="s", rebalance_timeout_ms=20_000, session_timeout_ms=30_000
    )
    assert not static.done
    ctx.sleep(20_000)  # nobody else rejoins
    assert code(static) is NONE
    group = ctx.group("g")
    assert list(group.members) == [static.value.member_id]
    assert group.leader_id == static.value.member_id  # the old leader did not rejoin: a rejoined member leads
    assert all(ctx.heartbeat_deadline("g", m) is None for m in dyn.member_ids)
    # Now a rebalance where the static member does not rejoin: it stays in the group.
    g2 = ctx.join_dynamic("g", rebalance_timeout_ms=20_000, session_timeout_ms=30_000)
    assert not g2.done
    ctx.sleep(20_000)
    assert code(g2) is NONE
    assert set(group.members) == {static.value.member_id, g2.value.member_id}
    assert g2.value.leader == g2.value.member_id


def test_rule_13_when_nobody_rejoined_but_static_members_remain_the_join_is_rescheduled() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2, static=True, rebalance_timeout_ms=20_000, session_timeout_ms=60_000)
    newcomer = ctx.join_dynamic("g", rebalance_timeout_ms=20_000, session_timeout_ms=60_000)
    assert not newcomer.done
    newcomer_id = list(ctx.group("g").members)[-1]
    ctx.leave("g", (newcomer_id, None))
    assert code(newcomer) is ErrorCode.UNKNOWN_MEMBER_ID  # its parked join is answered
    assert ctx.state("g") is GroupState.PREPARING_REBALANCE
    ctx.sleep(20_000)
    assert ctx.state("g") is GroupState.PREPARING_REBALANCE  # static members kept, nobody to lead
    assert ctx.join_deadline("g") == 40_000
    replies = [ctx.join(group_id="g", member_id=m, group_instance_id=g.instance_ids[m]) for m in g.member_ids]
    assert all(code(r) is NONE for r in replies)


# -- #14 -----------------------------------------------------------------------------------------------------


def test_rule_14_protocol_vote_picks_most_preferred_common_protocol() -> None:
    ctx = CoordinatorTestContext(initial_rebalance_delay_ms=100)
    for protocols in (
        [("range", b"a"), ("roundrobin", b"a"), ("sticky", b"a")],
        [("roundrobin", b"b"), ("range", b"b")],
        [("roundrobin", b"c"), ("range", b"c"), ("cooperative", b"c")],
    ):
        ctx.join_dynamic("g", protocols=protocols)
    ctx.sleep(1_000)  # the delay is extended once per arrival
    group = ctx.group("g")
    assert sorted(group.candidate_protocols()) == ["range", "roundrobin"]
    assert group.protocol_name == "roundrobin"  # 2 votes against 1


def test_rule_14_protocol_vote_tie_goes_to_the_first_vote_in_join_order() -> None:
    ctx = CoordinatorTestContext(initial_rebalance_delay_ms=100)
    ctx.join_dynamic("g", protocols=[("range", b""), ("roundrobin", b"")])
    ctx.join_dynamic("g", protocols=[("roundrobin", b""), ("range", b"")])
    ctx.sleep(1_000)  # the delay is extended once per arrival
    assert ctx.group("g").protocol_name == "range"


# -- #15 -----------------------------------------------------------------------------------------------------


def test_rule_15_rejoin_in_completing_rebalance_with_same_metadata_gets_current_generation() -> None:
    ctx = CoordinatorTestContext(initial_rebalance_delay_ms=100)
    a, b = ctx.join_dynamic("g"), ctx.join_dynamic("g")
    ctx.sleep(1_000)  # the delay is extended once per arrival
    assert ctx.state("g") is GroupState.COMPLETING_REBALANCE
    generation, leader = a.value.generation_id, a.value.leader
    for reply in (a, b):
        again = ctx.join(group_id="g", member_id=reply.value.member_id)
        assert code(again) is NONE and again.value.generation_id == generation
        is_leader = reply.value.member_id == leader
        assert len(again.value.members) == (2 if is_leader else 0)
    assert ctx.state("g") is GroupState.COMPLETING_REBALANCE
    changed = ctx.join(group_id="g", member_id=b.value.member_id, topics=("other",))
    assert not changed.done and ctx.state("g") is GroupState.PREPARING_REBALANCE


def test_rule_15_rejoin_in_stable_leader_rebalances_follower_unchanged_does_not() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2)
    follower = g.followers[0]
    same = ctx.join(group_id="g", member_id=follower)
    assert code(same) is NONE
    assert same.value.generation_id == g.generation_id and same.value.members == []
    assert same.value.leader == g.leader_id
    assert ctx.state("g") is GroupState.STABLE
    changed = ctx.join(group_id="g", member_id=follower, topics=("other",))
    assert not changed.done and ctx.state("g") is GroupState.PREPARING_REBALANCE


def test_rule_15_rejoin_of_the_stable_leader_always_rebalances() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2)
    leader = ctx.join(group_id="g", member_id=g.leader_id)
    assert not leader.done and ctx.state("g") is GroupState.PREPARING_REBALANCE
    follower = ctx.join(group_id="g", member_id=g.followers[0])
    assert leader.done and follower.done and leader.value.generation_id == g.generation_id + 1


def test_rule_15_rejoin_in_preparing_rebalance_updates_and_parks() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2)
    ctx.join(group_id="g", member_id=g.leader_id)
    rejoin = ctx.join(group_id="g", member_id=g.followers[0], topics=("a", "b"), session_timeout_ms=12_000)
    assert rejoin.done  # it was the last one
    member = ctx.group("g").member(g.followers[0])
    assert member.session_timeout_ms == 12_000 and member.metadata("range") == subscription("a", "b")


def test_rule_15_known_member_id_in_an_empty_group_is_unknown() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 1)
    ctx.leave("g", (g.leader_id, None))
    assert ctx.state("g") is GroupState.EMPTY
    reply = ctx.join(group_id="g", member_id=g.leader_id)
    assert code(reply) is ErrorCode.UNKNOWN_MEMBER_ID and reply.value.member_id == g.leader_id


# -- #16 -----------------------------------------------------------------------------------------------------


def test_rule_16_parked_join_of_a_new_member_times_out_after_five_minutes() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 1, session_timeout_ms=10_000, rebalance_timeout_ms=600_000)
    newcomer = ctx.join_dynamic("g", session_timeout_ms=10_000, rebalance_timeout_ms=600_000)
    assert not newcomer.done
    member_id = ctx.group("g").leader_id
    assert member_id == g.leader_id
    newcomer_id = next(m for m in ctx.group("g").members if m != g.leader_id)
    ctx.assert_heartbeat_deadline("g", newcomer_id, ctx.now_ms + 300_000)
    # The old member keeps heartbeating (REBALANCE_IN_PROGRESS) but never rejoins.
    while ctx.now_ms < 300_000 - 3_000:
        ctx.sleep(3_000)
        assert ctx.heartbeat("g", g.leader_id, g.generation_id) is ErrorCode.REBALANCE_IN_PROGRESS
    assert not newcomer.done
    ctx.sleep_until(300_000)
    assert code(newcomer) is ErrorCode.UNKNOWN_MEMBER_ID
    assert newcomer.value.member_id == ""
    assert not ctx.group("g").has_member(newcomer_id)


# -- #17 -----------------------------------------------------------------------------------------------------


def test_rule_17_static_rejoin_in_stable_replaces_id_without_rebalance_v9_leader_skips_assignment() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2, static=True)
    appends = ctx.store.appends
    leader_instance = g.instance_ids[g.leader_id]
    reply = ctx.join(group_id="g", version=9, group_instance_id=leader_instance)
    assert code(reply) is NONE
    new_id = reply.value.member_id
    assert new_id != g.leader_id and new_id.startswith(f"{leader_instance}-")
    assert reply.value.generation_id == g.generation_id
    assert reply.value.skip_assignment is True and reply.value.leader == new_id
    assert sorted(m.member_id for m in reply.value.members) == sorted([new_id, g.followers[0]])
    assert ctx.state("g") is GroupState.STABLE
    assert ctx.store.appends == appends + 1  # the new member id was persisted
    assert ctx.group("g").member(new_id).assignment == b"assignment-0"
    assert ctx.heartbeat("g", g.leader_id, g.generation_id, group_instance_id=leader_instance) is (
        ErrorCode.FENCED_INSTANCE_ID
    )
    assert ctx.heartbeat("g", new_id, g.generation_id, group_instance_id=leader_instance) is NONE


def test_rule_17_before_v9_a_returning_static_leader_gets_the_old_leader_id() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2, static=True)
    reply = ctx.join(group_id="g", version=5, group_instance_id=g.instance_ids[g.leader_id])
    assert code(reply) is NONE
    assert reply.value.leader == g.leader_id != reply.value.member_id
    assert reply.value.members == [] and reply.value.skip_assignment is False
    assert ctx.group("g").leader_id == reply.value.member_id


def test_rule_17_fenced_old_id_gets_its_parked_join_answered_with_fenced_instance_id() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2, static=True)
    follower = g.followers[0]
    instance = g.instance_ids[follower]
    parked = ctx.join(group_id="g", member_id=g.leader_id, group_instance_id=g.instance_ids[g.leader_id])
    old_parked = ctx.join(group_id="g", member_id=follower, group_instance_id=instance)
    assert parked.done  # both rejoined: generation 2, CompletingRebalance
    sync = ctx.sync(group_id="g", member_id=follower, generation_id=g.generation_id + 1, group_instance_id=instance)
    assert not sync.done
    replacement = ctx.join(group_id="g", group_instance_id=instance)  # CompletingRebalance: fence + rebalance
    assert code(sync) is ErrorCode.FENCED_INSTANCE_ID
    assert old_parked.done and code(old_parked) is NONE
    assert not replacement.done and ctx.state("g") is GroupState.PREPARING_REBALANCE


def test_rule_17_a_parked_join_of_a_fenced_static_id_gets_fenced_instance_id() -> None:
    """PreparingRebalance: the old id's JoinGroup is parked when its instance comes back with an unknown member id;
    the parked JoinGroup is answered FENCED_INSTANCE_ID at once and the new id takes its place in the join."""
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 3, static=True)
    old_id = g.followers[0]
    instance = g.instance_ids[old_id]
    leader_rejoin = ctx.join(group_id="g", member_id=g.leader_id, group_instance_id=g.instance_ids[g.leader_id])
    old_parked = ctx.join(group_id="g", member_id=old_id, group_instance_id=instance)
    assert ctx.state("g") is GroupState.PREPARING_REBALANCE and not old_parked.done  # the third has not rejoined
    replacement = ctx.join(group_id="g", group_instance_id=instance)
    assert code(old_parked) is ErrorCode.FENCED_INSTANCE_ID and old_parked.value.member_id == old_id
    assert not replacement.done and not leader_rejoin.done
    new_id = ctx.group("g").static_member_id(instance)
    assert new_id is not None and new_id != old_id and not ctx.group("g").has_member(old_id)
    assert ctx.group("g").num_awaiting_join == 2  # the leader and the replacement
    last = g.followers[1]
    ctx.join(group_id="g", member_id=last, group_instance_id=g.instance_ids[last])
    assert code(replacement) is NONE and replacement.value.member_id == new_id
    assert sorted(m.member_id for m in leader_rejoin.value.members) == sorted([g.leader_id, new_id, last])


def test_rule_17_static_rejoin_in_preparing_rebalance_just_updates_the_member() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2, static=True)
    leader_rejoin = ctx.join(group_id="g", member_id=g.leader_id, group_instance_id=g.instance_ids[g.leader_id])
    assert ctx.state("g") is GroupState.PREPARING_REBALANCE
    follower_instance = g.instance_ids[g.followers[0]]
    replacement = ctx.join(group_id="g", group_instance_id=follower_instance)
    assert leader_rejoin.done and replacement.done  # the replacement counts as rejoined
    assert code(replacement) is NONE and replacement.value.generation_id == g.generation_id + 1
    assert ctx.group("g").static_member_id(follower_instance) == replacement.value.member_id


def test_rule_17_failed_persist_of_a_static_replacement_reverts_it() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2, static=True)
    instance = g.instance_ids[g.followers[0]]
    ctx.store.fail_next(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    reply = ctx.join(group_id="g", group_instance_id=instance)
    assert code(reply) is ErrorCode.NOT_COORDINATOR and reply.value.member_id == ""
    group = ctx.group("g")
    assert group.static_member_id(instance) == g.followers[0]
    assert ctx.heartbeat("g", g.followers[0], g.generation_id, group_instance_id=instance) is NONE
    assert group.num_awaiting_join == 0


def test_rule_17_static_rejoin_with_a_protocol_change_in_stable_rebalances() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2, static=True)
    instance = g.instance_ids[g.leader_id]
    reply = ctx.join(
        group_id="g", group_instance_id=instance, protocols=[("roundrobin", b""), ("range", subscription("topic"))]
    )
    # "range" is still the only common protocol, so the selection would not change: no rebalance.
    assert reply.done and ctx.state("g") is GroupState.STABLE
    ctx2 = CoordinatorTestContext()
    g2 = ctx2.join_with_n_members("h", 1, static=True)
    reply2 = ctx2.join(
        group_id="h",
        group_instance_id=g2.instance_ids[g2.leader_id],
        protocols=[("roundrobin", b""), ("range", subscription("topic"))],
    )
    # Alone in the group, its new first choice wins the vote: the protocol would change, so rebalance.
    assert ctx2.state("h") is GroupState.COMPLETING_REBALANCE
    assert code(reply2) is NONE and reply2.value.protocol_name == "roundrobin"


# -- #18 -----------------------------------------------------------------------------------------------------


def test_rule_18_member_and_instance_validation_across_apis() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2, static=True)
    member, instance = g.leader_id, g.instance_ids[g.leader_id]
    other_instance = g.instance_ids[g.followers[0]]
    gen = g.generation_id
    # instance maps to another member id -> fenced
    assert ctx.heartbeat("g", member, gen, group_instance_id=other_instance) is ErrorCode.FENCED_INSTANCE_ID
    assert (
        code(ctx.sync(group_id="g", member_id=member, generation_id=gen, group_instance_id=other_instance))
        is ErrorCode.FENCED_INSTANCE_ID
    )
    commit = ctx.commit(group_id="g", member_id=member, generation_id=gen, group_instance_id=other_instance)
    assert set(ctx.commit_errors(commit).values()) == {ErrorCode.FENCED_INSTANCE_ID}
    assert code(ctx.join(group_id="g", member_id=member, group_instance_id=other_instance)) is (
        ErrorCode.FENCED_INSTANCE_ID
    )
    leave = ctx.leave("g", (member, other_instance))
    assert leave.members[0].error_code == ErrorCode.FENCED_INSTANCE_ID
    # unknown instance -> unknown member
    assert ctx.heartbeat("g", member, gen, group_instance_id="nope") is ErrorCode.UNKNOWN_MEMBER_ID
    # unknown member id -> unknown member
    assert ctx.heartbeat("g", "nobody", gen) is ErrorCode.UNKNOWN_MEMBER_ID
    # the right pair works
    assert ctx.heartbeat("g", member, gen, group_instance_id=instance) is NONE
    assert ctx.state("g") is GroupState.STABLE


# -- #19 -----------------------------------------------------------------------------------------------------


def test_rule_19_static_membership_is_supported_never_unsupported_version() -> None:
    ctx = CoordinatorTestContext()
    g = ctx.join_with_n_members("g", 2, static=True, version=5)
    instance = g.instance_ids[g.leader_id]
    sync = ctx.sync(
        group_id="g",
        member_id=g.leader_id,
        generation_id=g.generation_id,
        group_instance_id=instance,
        version=3,
        protocol_type=None,
        protocol_name=None,
    )
    assert code(sync) is NONE
    commit = ctx.commit(
        group_id="g", member_id=g.leader_id, generation_id=g.generation_id, group_instance_id=instance, version=7
    )
    assert set(ctx.commit_errors(commit).values()) == {NONE}
