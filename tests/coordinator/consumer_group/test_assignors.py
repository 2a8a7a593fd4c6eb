"""Kafka's server-side assignors (`uniform`, `range`): the documented examples of Kafka's own tests, then properties.

The examples are those of Kafka's RangeAssignorTest, UniformHomogeneousAssignmentBuilderTest and
UniformHeterogeneousAssignmentBuilderTest (group-coordinator), with topics named t1..t4 and members A, B, C. Where
Kafka's expected answer depends on Java hash-set iteration order (which member gets the extra partition, which
topic is handed out first) we assert our deterministic answer and say, in the test, what Kafka's test expects.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordinator.consumer_group.assignor_spec import GroupAssignment, GroupSpec, MemberSpec, PartitionAssignorError
from coordinator.consumer_group.assignors import ASSIGNORS, DEFAULT_ASSIGNOR, range_, uniform

Plain = dict[str, dict[str, set[int]]]


def spec(**members: MemberSpec) -> GroupSpec:
    return GroupSpec(members)


def m(*topics: str, owned: Mapping[str, list[int]] | None = None, instance: str | None = None) -> MemberSpec:
    return MemberSpec.of(topics, owned, instance)


def plain(assignment: GroupAssignment) -> Plain:
    """The assignment as plain dicts and sets, members with nothing included as {} (Kafka's tests list them too)."""
    return {member: {topic: set(parts) for topic, parts in topics.items()} for member, topics in assignment.items()}


# ---------------------------------------------------------------------------------------------------------------
# Registry


def test_both_kafka_assignors_are_registered_and_uniform_is_the_default() -> None:
    assert set(ASSIGNORS) == {"uniform", "range"}
    assert DEFAULT_ASSIGNOR == "uniform"


@pytest.mark.parametrize("name", ["uniform", "range"])
def test_a_member_subscribed_to_nothing_gets_nothing(name: str) -> None:
    # Kafka: testOneConsumerNoTopic / testOneMemberNoTopicSubscription (Kafka returns no entry; we return an empty one).
    assert plain(ASSIGNORS[name](spec(A=m()), {"t1": 3})) == {"A": {}}


@pytest.mark.parametrize("name", ["uniform", "range"])
def test_a_subscription_to_an_unknown_topic_is_refused(name: str) -> None:
    # Kafka: testOneConsumerSubscribedToNonExistentTopic / testOneMemberSubscribedToNonexistentTopic.
    with pytest.raises(PartitionAssignorError):
        ASSIGNORS[name](spec(A=m("t2")), {"t1": 3})


@pytest.mark.parametrize("name", ["uniform", "range"])
def test_an_empty_group_gets_an_empty_assignment(name: str) -> None:
    assert plain(ASSIGNORS[name](spec(), {"t1": 3})) == {}


# ---------------------------------------------------------------------------------------------------------------
# range: Kafka 4's RangeAssignorTest (co-partitioned ranges, not sticky to the current assignment)


def test_range_first_assignment_two_members_two_topics_same_subscriptions() -> None:
    got = range_(spec(A=m("t1", "t3"), B=m("t1", "t3")), {"t1": 3, "t3": 2})
    assert plain(got) == {"A": {"t1": {0, 1}, "t3": {0}}, "B": {"t1": {2}, "t3": {1}}}


def test_range_first_assignment_three_members_three_topics_different_subscriptions() -> None:
    got = range_(spec(A=m("t1", "t2"), B=m("t3"), C=m("t2", "t3")), {"t1": 3, "t2": 3, "t3": 2})
    assert plain(got) == {
        "A": {"t1": {0, 1, 2}, "t2": {0, 1}},
        "B": {"t3": {0}},
        "C": {"t2": {2}, "t3": {1}},
    }


def test_range_more_members_than_partitions_leaves_the_last_member_without_one() -> None:
    got = range_(spec(A=m("t1", "t3"), B=m("t1", "t3"), C=m("t1", "t3")), {"t1": 3, "t3": 2})
    assert plain(got) == {"A": {"t1": {0}, "t3": {0}}, "B": {"t1": {1}, "t3": {1}}, "C": {"t1": {2}}}


def test_range_member_added_gets_the_ranges_of_its_rank_not_the_leftovers() -> None:
    # Kafka 4's testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics: co-partitioning
    # wins over stickiness, B gives up partition 2 of both topics and takes 1.
    group = spec(
        A=m("t1", "t2", owned={"t1": [0, 1], "t2": [0, 1]}),
        B=m("t1", "t2", owned={"t1": [2], "t2": [2]}),
        C=m("t1", "t2"),
    )
    assert plain(range_(group, {"t1": 3, "t2": 3})) == {
        "A": {"t1": {0}, "t2": {0}},
        "B": {"t1": {1}, "t2": {1}},
        "C": {"t1": {2}, "t2": {2}},
    }


def test_range_partitions_added_extend_the_ranges() -> None:
    # Kafka: testReassignmentWhenOnePartitionAddedForTwoMembersTwoTopics.
    group = spec(
        A=m("t1", "t2", owned={"t1": [0, 1], "t2": [0, 1]}),
        B=m("t1", "t2", owned={"t1": [2], "t2": [2]}),
    )
    assert plain(range_(group, {"t1": 4, "t2": 4})) == {
        "A": {"t1": {0, 1}, "t2": {0, 1}},
        "B": {"t1": {2, 3}, "t2": {2, 3}},
    }


def test_range_member_added_with_one_topic_and_a_partition_added() -> None:
    # Kafka: testReassignmentWhenOneMemberAddedAndOnePartitionAfterInitialAssignmentWithTwoMembersTwoTopics.
    group = spec(
        A=m("t1", "t2", owned={"t1": [0, 1], "t2": [0, 1]}),
        B=m("t1", "t2", owned={"t1": [2], "t2": [2]}),
        C=m("t1"),
    )
    assert plain(range_(group, {"t1": 4, "t2": 3})) == {
        "A": {"t1": {0, 1}, "t2": {0, 1}},
        "B": {"t1": {2}, "t2": {2}},
        "C": {"t1": {3}},
    }


def test_range_member_removed_leaves_everything_to_the_other() -> None:
    # Kafka: testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithTwoMembersTwoTopics.
    group = spec(B=m("t1", "t2", owned={"t1": [2], "t2": [2]}))
    assert plain(range_(group, {"t1": 3, "t2": 3})) == {"B": {"t1": {0, 1, 2}, "t2": {0, 1, 2}}}


def test_range_multiple_subscriptions_changed() -> None:
    # Kafka: testReassignmentWhenMultipleSubscriptionsRemovedAfterInitialAssignmentWithThreeMembersTwoTopics.
    group = spec(
        A=m("t1", owned={"t1": [0, 1, 2], "t2": [0]}),
        B=m("t1", "t2", "t3", owned={"t2": [1]}),
        C=m("t2", owned={"t2": [2], "t3": [0, 1]}),
    )
    assert plain(range_(group, {"t1": 3, "t2": 3, "t3": 2})) == {
        "A": {"t1": {0, 1}},
        "B": {"t1": {2}, "t2": {0, 1}, "t3": {0, 1}},
        "C": {"t2": {2}},
    }


def test_range_static_members_keep_their_ranges_across_a_restart_with_new_member_ids() -> None:
    # Kafka's RangeAssignor javadoc: members with an instance id are ordered by it, so the M0 -> M3, M1 -> M2
    # rolling bounce of the example keeps I0 on [T1P0, T1P1, T2P0, T2P1] and I1 on [T1P2, T2P2].
    before = range_(spec(M0=m("t1", "t2", instance="I0"), M1=m("t1", "t2", instance="I1")), {"t1": 3, "t2": 3})
    after = range_(spec(M3=m("t1", "t2", instance="I0"), M2=m("t1", "t2", instance="I1")), {"t1": 3, "t2": 3})
    assert plain(before)["M0"] == plain(after)["M3"] == {"t1": {0, 1}, "t2": {0, 1}}
    assert plain(before)["M1"] == plain(after)["M2"] == {"t1": {2}, "t2": {2}}


def test_range_static_members_come_before_dynamic_ones() -> None:
    got = range_(spec(A=m("t1"), Z=m("t1", instance="i")), {"t1": 2})
    assert plain(got) == {"A": {"t1": {1}}, "Z": {"t1": {0}}}


# ---------------------------------------------------------------------------------------------------------------
# uniform, homogeneous: Kafka's UniformHomogeneousAssignmentBuilderTest


def test_uniform_homogeneous_first_assignment_two_members_two_topics() -> None:
    # Kafka expects A: t3 {0,1}, B: t1 {0,1,2}: the same split with the extra partition on the other member, which
    # Java's hash iteration order picks. Here the first member in id order takes the extra one, topics in order.
    got = uniform(spec(A=m("t1", "t3"), B=m("t1", "t3")), {"t1": 3, "t3": 2})
    assert plain(got) == {"A": {"t1": {0, 1, 2}}, "B": {"t3": {0, 1}}}


def test_uniform_homogeneous_more_members_than_partitions() -> None:
    # Kafka expects A: {}, B: {0}, C: {1} (hash order); ours hands out in id order.
    got = uniform(spec(A=m("t3"), B=m("t3"), C=m("t3")), {"t3": 2})
    assert plain(got) == {"A": {"t3": {0}}, "B": {"t3": {1}}, "C": {}}


def test_uniform_homogeneous_unbalanced_previous_assignment_is_balanced_by_one_move() -> None:
    # Kafka: testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment, exactly.
    group = spec(
        A=m("t1", "t2", owned={"t1": [0, 1], "t2": [0, 1]}),
        B=m("t1", "t2", owned={"t1": [2], "t2": [2]}),
    )
    assert plain(uniform(group, {"t1": 3, "t2": 3})) == {
        "A": {"t1": {0, 1}, "t2": {0}},
        "B": {"t1": {2}, "t2": {1, 2}},
    }


def test_uniform_homogeneous_partitions_added_are_spread_and_nothing_moves() -> None:
    # Kafka: testReassignmentWhenPartitionsAreAddedForTwoMembersTwoTopics expects A: t1 {0,2} t2 {0,3,4},
    # B: t1 {1,3,4,5} t2 {1,2} (B took the extra partition). Ours gives A the extra one; in both nothing moves.
    group = spec(
        A=m("t1", "t2", owned={"t1": [0, 2], "t2": [0]}),
        B=m("t1", "t2", owned={"t1": [1], "t2": [1, 2]}),
    )
    assert plain(uniform(group, {"t1": 6, "t2": 5})) == {
        "A": {"t1": {0, 2, 3, 4, 5}, "t2": {0}},
        "B": {"t1": {1}, "t2": {1, 2, 3, 4}},
    }


def test_uniform_homogeneous_member_added_takes_only_the_surplus() -> None:
    # Kafka: testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics, exactly.
    group = spec(
        A=m("t1", "t2", owned={"t1": [0, 2], "t2": [0]}),
        B=m("t1", "t2", owned={"t1": [1], "t2": [1, 2]}),
        C=m("t1", "t2"),
    )
    assert plain(uniform(group, {"t1": 3, "t2": 3})) == {
        "A": {"t1": {0, 2}},
        "B": {"t1": {1}, "t2": {1}},
        "C": {"t2": {0, 2}},
    }


def test_uniform_homogeneous_member_removed_frees_only_its_partitions() -> None:
    # Kafka: testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersTwoTopics (C held t1 2,
    # t2 2): A and B keep theirs and share C's.
    group = spec(
        A=m("t1", "t2", owned={"t1": [0], "t2": [0]}),
        B=m("t1", "t2", owned={"t1": [1], "t2": [1]}),
    )
    assert plain(uniform(group, {"t1": 3, "t2": 3})) == {
        "A": {"t1": {0, 2}, "t2": {0}},
        "B": {"t1": {1}, "t2": {1, 2}},
    }


def test_uniform_homogeneous_subscription_changed_drops_the_unsubscribed_topic() -> None:
    group = spec(
        A=m("t2", owned={"t1": [0, 1], "t2": [0]}),
        B=m("t2", owned={"t1": [2], "t2": [1]}),
    )
    assert plain(uniform(group, {"t1": 3, "t2": 3})) == {"A": {"t2": {0, 2}}, "B": {"t2": {1}}}


# ---------------------------------------------------------------------------------------------------------------
# uniform, heterogeneous: Kafka's UniformHeterogeneousAssignmentBuilderTest


def test_uniform_heterogeneous_first_assignment_two_members_two_topics() -> None:
    # Kafka: testFirstAssignmentTwoMembersTwoTopics, exactly.
    got = uniform(spec(A=m("t1", "t3"), B=m("t3")), {"t1": 3, "t3": 6})
    assert plain(got) == {"A": {"t1": {0, 1, 2}, "t3": {4}}, "B": {"t3": {0, 1, 2, 3, 5}}}


def test_uniform_heterogeneous_more_members_than_partitions() -> None:
    # Kafka: testFirstAssignmentNumMembersGreaterThanTotalNumPartitions, exactly.
    got = uniform(spec(A=m("t3"), B=m("t3"), C=m("t1")), {"t3": 1, "t1": 2})
    assert plain(got) == {"A": {"t3": {0}}, "B": {}, "C": {"t1": {0, 1}}}


def test_uniform_heterogeneous_unbalanced_previous_assignment() -> None:
    # Kafka: testReassignmentForTwoMembersThreeTopicsGivenUnbalancedPrevAssignment, exactly.
    group = spec(
        A=m("t1", owned={"t1": [0, 1, 2]}),
        B=m("t1", "t2", owned={"t1": [3], "t2": [0]}),
        C=m("t1", "t2", "t3", owned={"t1": [4, 5], "t2": [1, 2, 3], "t3": [0, 1, 2, 3]}),
    )
    assert plain(uniform(group, {"t1": 6, "t2": 4, "t3": 4})) == {
        "A": {"t1": {0, 1, 2, 5}},
        "B": {"t1": {3}, "t2": {0, 1, 2, 3}},
        "C": {"t1": {4}, "t3": {0, 1, 2, 3}},
    }


def test_uniform_heterogeneous_partitions_added() -> None:
    # Kafka: testReassignmentWhenPartitionsAreAddedForTwoMembers, exactly.
    group = spec(
        A=m("t1", "t3", owned={"t1": [0, 1, 2, 3], "t3": [0, 1]}),
        B=m("t1", "t2", "t3", "t4", owned={"t2": [0, 1, 2], "t4": [0, 1, 2]}),
    )
    assert plain(uniform(group, {"t1": 6, "t2": 5, "t3": 3, "t4": 3})) == {
        "A": {"t1": {0, 1, 2, 3, 4, 5}, "t3": {0, 1, 2}},
        "B": {"t2": {0, 1, 2, 3, 4}, "t4": {0, 1, 2}},
    }


def test_uniform_heterogeneous_member_and_partitions_added() -> None:
    # Kafka: testReassignmentWhenOneMemberAddedAndPartitionsAddedTwoMembersTwoTopics, exactly.
    group = spec(
        A=m("t1", owned={"t1": [0, 2], "t2": [0]}),
        B=m("t1", "t2", owned={"t1": [1], "t2": [1, 2]}),
        C=m("t1", "t2"),
    )
    assert plain(uniform(group, {"t1": 6, "t2": 7})) == {
        "A": {"t1": {0, 2, 3, 4, 5}},
        "B": {"t1": {1}, "t2": {1, 2, 6}},
        "C": {"t2": {0, 3, 4, 5}},
    }


def test_uniform_heterogeneous_member_removed() -> None:
    # Kafka: testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersThreeTopics, exactly.
    group = spec(
        A=m("t1", "t3", owned={"t1": [0, 1, 2], "t3": [0, 1]}),
        B=m("t2", owned={"t2": [3, 4, 5, 6]}),
    )
    assert plain(uniform(group, {"t1": 3, "t2": 8, "t3": 3})) == {
        "A": {"t1": {0, 1, 2}, "t3": {0, 1, 2}},
        "B": {"t2": {0, 1, 2, 3, 4, 5, 6, 7}},
    }


def test_uniform_heterogeneous_subscription_removed() -> None:
    # Kafka: testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics, exactly.
    group = spec(
        A=m("t1", owned={"t1": [0, 2], "t2": [1, 3]}),
        B=m("t1", "t2", owned={"t1": [1], "t2": [0, 2, 4]}),
    )
    assert plain(uniform(group, {"t1": 3, "t2": 5})) == {"A": {"t1": {0, 1, 2}}, "B": {"t2": {0, 1, 2, 3, 4}}}


# ---------------------------------------------------------------------------------------------------------------
# Input clean-up: a stale current assignment never yields a partition twice or one that does not exist


@pytest.mark.parametrize("name", ["uniform", "range"])
def test_stale_and_duplicate_claims_are_ignored(name: str) -> None:
    group = spec(A=m("t1", owned={"t1": [0, 1, 7]}), B=m("t1", owned={"t1": [1]}))
    got = plain(ASSIGNORS[name](group, {"t1": 2}))
    assert sorted(p for parts in got.values() for p in parts.get("t1", set())) == [0, 1]


# ---------------------------------------------------------------------------------------------------------------
# Properties

TOPICS = ["t1", "t2", "t3", "t4"]
MEMBER_IDS = ["m-a", "m-b", "m-c", "m-d", "m-e", "m-f"]


@st.composite
def groups(draw: st.DrawFn, homogeneous: bool) -> tuple[GroupSpec, dict[str, int]]:
    """A group and its topics, with a valid (disjoint, subscribed, in-range) previous target assignment."""
    counts = {t: draw(st.integers(0, 9)) for t in draw(st.lists(st.sampled_from(TOPICS), min_size=1, unique=True))}
    names = draw(st.lists(st.sampled_from(MEMBER_IDS), min_size=1, unique=True))
    shared = draw(st.sets(st.sampled_from(sorted(counts)), min_size=1))
    subs = {n: shared if homogeneous else draw(st.sets(st.sampled_from(sorted(counts)))) for n in names}
    owned: dict[str, dict[str, list[int]]] = {n: {} for n in names}
    for topic, count in counts.items():
        for partition in range(count):
            holders = [n for n in names if topic in subs[n]]
            owner = draw(st.sampled_from([None, *holders]))
            if owner is not None:
                owned[owner].setdefault(topic, []).append(partition)
    return GroupSpec({n: m(*subs[n], owned=owned[n]) for n in names}), counts


def assert_valid(group: GroupSpec, counts: dict[str, int], got: GroupAssignment) -> None:
    """Every subscribed partition is assigned exactly once, to a member subscribed to its topic."""
    assert set(got) == set(group.members)
    seen: list[tuple[str, int]] = []
    for member_id, topics in got.items():
        for topic, parts in topics.items():
            assert topic in group.members[member_id].subscribed_topics
            seen.extend((topic, p) for p in parts)
    subscribed = {t for member in group.members.values() for t in member.subscribed_topics}
    assert sorted(seen) == sorted((t, p) for t in subscribed for p in range(counts[t]))


def sizes(got: GroupAssignment) -> list[int]:
    return [sum(len(parts) for parts in topics.values()) for topics in got.values()]


def reversed_spec(group: GroupSpec) -> GroupSpec:
    """The same group with every mapping built in the reverse order."""
    return GroupSpec(
        {
            member_id: MemberSpec(
                frozenset(reversed(sorted(member.subscribed_topics))),
                dict(reversed(list(member.assignment.items()))),
                member.instance_id,
            )
            for member_id, member in reversed(list(group.members.items()))
        }
    )


@settings(max_examples=300, deadline=None)
@given(case=st.one_of(groups(homogeneous=True), groups(homogeneous=False)), name=st.sampled_from(["uniform", "range"]))
def test_every_subscribed_partition_is_assigned_once_to_a_subscriber(
    case: tuple[GroupSpec, dict[str, int]], name: str
) -> None:
    group, counts = case
    assert_valid(group, counts, ASSIGNORS[name](group, counts))


@settings(max_examples=300, deadline=None)
@given(case=groups(homogeneous=True))
def test_uniform_homogeneous_is_balanced_within_one(case: tuple[GroupSpec, dict[str, int]]) -> None:
    group, counts = case
    got = sizes(uniform(group, counts))
    assert max(got) - min(got) <= 1


@settings(max_examples=300, deadline=None)
@given(case=groups(homogeneous=True))
def test_uniform_homogeneous_member_keeps_what_it_owns_up_to_its_fair_share(
    case: tuple[GroupSpec, dict[str, int]],
) -> None:
    """Stickiness: a member keeps min(owned, floor share) partitions, and nothing it owned moves unless the owner
    holds more than the ceiling share; so a balanced previous assignment comes back unchanged."""
    group, counts = case
    got = uniform(group, counts)
    total = sum(counts[t] for t in next(iter(group.members.values())).subscribed_topics)
    floor_share = total // len(group.members)
    for member_id, member in group.members.items():
        owned = {(t, p) for t, parts in member.assignment.items() for p in parts}
        kept = {(t, p) for t, parts in got[member_id].items() for p in parts} & owned
        assert len(kept) >= min(len(owned), floor_share)


@settings(max_examples=200, deadline=None)
@given(case=st.one_of(groups(homogeneous=True), groups(homogeneous=False)))
def test_uniform_is_a_fixed_point(case: tuple[GroupSpec, dict[str, int]]) -> None:
    """Stickiness: assigning again from the assignment it just produced moves nothing."""
    group, counts = case
    first = uniform(group, counts)
    again = GroupSpec({n: MemberSpec(mem.subscribed_topics, first[n]) for n, mem in group.members.items()})
    assert plain(uniform(again, counts)) == plain(first)


@settings(max_examples=200, deadline=None)
@given(case=groups(homogeneous=True), joiner=st.sampled_from(["m-x", "m-y"]))
def test_uniform_homogeneous_joiner_only_takes_from_members_above_the_new_share(
    case: tuple[GroupSpec, dict[str, int]], joiner: str
) -> None:
    """Minimal movement when a member joins: from a balanced assignment, the partitions that move all go to the
    joiner, and each old member gives up at most what it holds above the new floor share."""
    group, counts = case
    balanced = uniform(group, counts)
    topics = next(iter(group.members.values())).subscribed_topics
    members = {n: MemberSpec(mem.subscribed_topics, balanced[n]) for n, mem in group.members.items()}
    members[joiner] = MemberSpec(topics)
    after = uniform(GroupSpec(members), counts)
    floor_share = sum(counts[t] for t in topics) // len(members)
    for member_id in group.members:
        before = {(t, p) for t, parts in balanced[member_id].items() for p in parts}
        now = {(t, p) for t, parts in after[member_id].items() for p in parts}
        assert now <= before
        assert len(before - now) <= max(0, len(before) - floor_share)


@settings(max_examples=200, deadline=None)
@given(case=st.one_of(groups(homogeneous=True), groups(homogeneous=False)), name=st.sampled_from(["uniform", "range"]))
def test_same_input_same_output_whatever_the_mapping_order(case: tuple[GroupSpec, dict[str, int]], name: str) -> None:
    group, counts = case
    forward = ASSIGNORS[name](group, counts)
    backward = ASSIGNORS[name](reversed_spec(group), dict(reversed(list(counts.items()))))
    assert plain(forward) == plain(backward)
    assert list(forward) == sorted(forward)


@settings(max_examples=300, deadline=None)
@given(case=groups(homogeneous=False))
def test_uniform_heterogeneous_no_single_move_improves_balance(case: tuple[GroupSpec, dict[str, int]]) -> None:
    """Balance as Kafka's heterogeneous builder defines it: for every topic, no member holding one of its partitions
    has more than one partition above any other subscriber of that topic (so moving one would not help)."""
    group, counts = case
    got = uniform(group, counts)
    load = dict(zip(got, sizes(got), strict=True))
    for topic in counts:
        subscribers = [n for n, member in group.members.items() if topic in member.subscribed_topics]
        holders = [n for n in subscribers if got[n].get(topic)]
        for giver in holders:
            assert all(load[giver] - load[taker] <= 1 for taker in subscribers)
