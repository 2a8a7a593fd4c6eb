"""Regex subscriptions and topic-metadata changes (rules K7, K18, K59-K61 of /work/notes/kip848-rules.md).

A deliberate difference from Kafka, tested as group-broker's behaviour: Kafka resolves a regular expression new
to the group in the background (at most every 10 s, REGEX_BATCH_REFRESH_MIN_INTERVAL_MS) and bumps the group
epoch when the result comes back; group-broker resolves it synchronously, on the heartbeat that brings it, and
re-resolves every regex of a group at its next heartbeat after the topic catalog's version moved. So where Kafka
answers a new regex with no partitions first and the matching topics one rebalance later, group-broker answers
with them at once. Everything else (what bumps, which records, revocation of partitions of a deleted topic)
follows Kafka.

Epochs are Kafka 4.4's (KAFKA-20268): a new group starts at epoch 1, written nowhere, and its first join writes
epoch 2, so a lone first member answers epoch 2."""

from __future__ import annotations

from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext, by_name
from tests.coordinator.consumer_group.written import Written, current_assignment, kind, new_target, target_partitions

STABLE, UNREVOKED = 0, 1
TOPICS = ("foo1", "foo2", "foo3", "bar")


def regex_join(ctx: ConsumerGroupTestContext, member_id: str, regex: str) -> dict[str, list[int]] | None:
    response = ctx.join_cg(member_id=member_id, topics=(), subscribed_topic_names=None, subscribed_topic_regex=regex)
    return by_name(response, *TOPICS)


def test_k61_new_regex_is_resolved_at_once() -> None:
    """K61 (group-broker: synchronous resolution): the joining member's new regex is resolved on its join, the
    group epoch moves and the member gets the matching topics' partitions in the same answer. The member record
    keeps the regex and no topic names; the (4.0) PartitionMetadata record lists the matched topics."""
    ctx = ConsumerGroupTestContext(topics={"foo1": 1, "foo2": 2, "bar": 1})
    written = Written(ctx)
    assert regex_join(ctx, "m1", "foo.*") == {"foo1": [0], "foo2": [0, 1]}
    records = written.new()
    member = records[0].value
    assert (member.subscribed_topic_regex, member.subscribed_topic_names) == ("foo.*", [])  # type: ignore[union-attr]
    topics = records[1].value.topics  # type: ignore[union-attr]
    assert sorted(t.topic_name for t in topics) == ["foo1", "foo2"]
    assert records[2].value.epoch == 2  # type: ignore[union-attr]
    assert current_assignment(records[-1]) == (2, 0, STABLE, {"foo1": [0], "foo2": [0, 1]}, {})


def test_k61_regex_is_a_full_match() -> None:
    """K61/K62: Kafka matches with RE2/J `matches()`: the whole topic name must match, not a prefix."""
    ctx = ConsumerGroupTestContext(topics={"foo1": 1, "xfoo1": 1, "foo1x": 1})
    response = ctx.join_cg(member_id="m1", topics=(), subscribed_topic_names=None, subscribed_topic_regex="foo\\d")
    assert by_name(response, "foo1") == {"foo1": [0]}
    assert ctx.cg().resolved_regexes == {"foo\\d": frozenset({"foo1"})}


def test_k61_switching_to_a_regex_the_group_already_resolved_bumps() -> None:
    """K61: a member switching from names to a regex already resolved in the group bumps the group epoch at once
    and the new target splits the regex's topics."""
    ctx = ConsumerGroupTestContext(topics={"foo1": 2, "bar": 1})
    regex_join(ctx, "m1", "foo.*")
    ctx.join_cg(member_id="m2", topics=["bar"])
    assert ctx.cg().group_epoch == 3
    ctx.cg_heartbeat(member_id="m2", member_epoch=3, subscribed_topic_regex="foo.*", owned={"bar": [0]})
    group = ctx.cg()
    assert group.group_epoch == 4
    assert group.members["m2"].subscribed_topic_regex == "foo.*"


def test_k59_a_matching_topic_created_later_is_picked_up() -> None:
    """K59/K62 (group-broker: at the next heartbeat, no 10 s batching): creating a topic the regex matches
    bumps the group epoch at the member's next heartbeat, which brings the new partitions."""
    ctx = ConsumerGroupTestContext(topics={"foo1": 1, "bar": 1})
    regex_join(ctx, "m1", "foo.*")
    ctx.create_topic("foo2", 2)
    written = Written(ctx)
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo1": [0]}).value
    assert (response.member_epoch, by_name(response, *TOPICS)) == (3, {"foo1": [0], "foo2": [0, 1]})
    records = written.new()
    assert [kind(r) for r in records] == ["PartitionMetadata", "Metadata", *new_target("m1")]
    assert target_partitions(records[2]) == {"foo1": [0], "foo2": [0, 1]}
    assert ctx.cg().resolved_regexes["foo.*"] == frozenset({"foo1", "foo2"})


def test_k59_a_topic_change_outside_the_subscription_changes_nothing() -> None:
    """K59: a topic created that no member subscribes to (by name or regex) writes nothing and keeps the epoch,
    although the catalog version moved."""
    ctx = ConsumerGroupTestContext(topics={"foo1": 1, "bar": 1})
    regex_join(ctx, "m1", "foo.*")
    ctx.join_cg(member_id="m2", topics=["bar"])
    ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo1": [0]})
    ctx.create_topic("other", 3)
    written = Written(ctx)
    response = ctx.cg_heartbeat(member_id="m2", member_epoch=3, owned={"bar": [0]}).value
    assert (response.error_code, response.member_epoch, response.assignment) == (0, 3, None)
    assert written.new() == []
    assert ctx.cg().group_epoch == 3


def test_k60_partitions_of_a_deleted_topic_are_revoked() -> None:
    """K60/K25: deleting a subscribed topic bumps the epoch at the next heartbeat; its partitions leave the
    target and the member must stop listing them (UNREVOKED) before it moves to the new epoch."""
    ctx = ConsumerGroupTestContext(topics={"foo1": 1, "foo2": 1})
    regex_join(ctx, "m1", "foo.*")
    ctx.delete_topic("foo2")
    written = Written(ctx)
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo1": [0], "foo2": [0]}).value
    assert (response.member_epoch, by_name(response, *TOPICS)) == (2, {"foo1": [0]})
    records = written.new()
    assert current_assignment(records[-1]) == (2, 2, UNREVOKED, {"foo1": [0]}, {"foo2": [0]})
    assert ctx.cg().group_epoch == 3
    done = ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo1": [0]}).value
    assert (done.member_epoch, done.assignment) == (3, None)
    assert current_assignment(written.new()[-1]) == (3, 2, STABLE, {"foo1": [0]}, {})


def test_k60_partitions_added_to_a_regex_topic_are_assigned() -> None:
    """K60: partitions added to a topic matched by a regex are assigned at the next target computation."""
    ctx = ConsumerGroupTestContext(topics={"foo1": 1})
    regex_join(ctx, "m1", "foo.*")
    ctx.create_topic("foo1", 3)
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={"foo1": [0]}).value
    assert (response.member_epoch, by_name(response, *TOPICS)) == (3, {"foo1": [0, 1, 2]})


def test_k61_a_regex_matching_nothing_yet_joins_with_no_partitions() -> None:
    """K61/K30: a regex that matches no topic yet joins at epoch 2 (Kafka 4.4) with an empty assignment; the first
    matching topic brings partitions at the next heartbeat."""
    ctx = ConsumerGroupTestContext(topics={"bar": 1})
    assert regex_join(ctx, "m1", "foo.*") == {}
    assert ctx.cg().resolved_regexes == {"foo.*": frozenset()}
    ctx.create_topic("foo3", 1)
    response = ctx.cg_heartbeat(member_id="m1", member_epoch=2, owned={}).value
    assert (response.member_epoch, by_name(response, *TOPICS)) == (3, {"foo3": [0]})


def test_k7_a_regex_is_only_checked_when_it_changes() -> None:
    """K7: validity is checked when the member's regex changes to one the group does not use yet; a heartbeat
    repeating the member's (valid) regex does not re-resolve or write anything."""
    ctx = ConsumerGroupTestContext(topics={"foo1": 1})
    regex_join(ctx, "m1", "foo.*")
    written = Written(ctx)
    response = ctx.cg_heartbeat(
        member_id="m1", member_epoch=2, subscribed_topic_regex="foo.*", owned={"foo1": [0]}
    ).value
    assert (response.error_code, response.member_epoch) == (0, 2)
    assert written.new() == []


def test_k61_dropping_the_regex_bumps_the_epoch_and_revokes_its_topics() -> None:
    """Kafka 4.4 bumps the group epoch whenever a member's regex changes, to none included
    (`maybeUpdateRegularExpressions` answers REGEX_UPDATED), and reconciles the member as one whose subscription
    changed: the partitions of topics it no longer subscribes to are revoked at once."""
    ctx = ConsumerGroupTestContext(topics={"foo1": 1, "foo2": 2, "bar": 1})
    assert regex_join(ctx, "m1", "foo.*") == {"foo1": [0], "foo2": [0, 1]}
    epoch = ctx.cg().group_epoch
    dropped = ctx.cg_heartbeat(
        member_id="m1", member_epoch=epoch, subscribed_topic_regex="", owned={"foo1": [0], "foo2": [0, 1]}
    ).value
    assert ctx.cg().group_epoch == epoch + 1
    assert (dropped.error_code, dropped.member_epoch) == (0, epoch)  # revoke first, then move to the new epoch
    assert by_name(dropped, *TOPICS) == {}
    revoked = ctx.cg_heartbeat(member_id="m1", member_epoch=epoch, owned={}).value
    assert (revoked.error_code, revoked.member_epoch) == (0, epoch + 1)
    assert ctx.cg().state.value == "Stable"
