"""Consumer groups in the group admin and offset APIs (rules K43-K46, K49-K51 of /work/notes/kip848-rules.md):
ListGroups filters, DescribeGroups of a consumer group id, the member-epoch checks of OffsetCommit and
OffsetFetch v9, DeleteGroups and OffsetDelete, with Kafka's error codes and the records each write leaves.

Epochs are Kafka 4.4's (KAFKA-20268): a lone first member is at epoch 2."""

from __future__ import annotations

import pytest

from coordinator.consumer_group.offset_checks import validate_offset_commit
from coordinator.errors import GroupError
from protocol.errors import ErrorCode
from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchResponseGroup
from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext
from tests.coordinator.consumer_group.written import Written, kind

NO_ERRORS = {("foo", 0): ErrorCode.NONE}


def one_member(**kw: object) -> ConsumerGroupTestContext:
    """Consumer group `group` with m1 at epoch 2 owning foo 0-1."""
    ctx = ConsumerGroupTestContext(topics={"foo": 2}, **kw)
    assert ctx.join_cg(member_id="m1").member_epoch == 2
    return ctx


def emptied(ctx: ConsumerGroupTestContext) -> None:
    """m1 leaves: the consumer group stays, Empty."""
    assert ctx.cg_heartbeat(member_id="m1", member_epoch=-1).value.error_code == 0
    assert ctx.cg().state.value == "Empty"


def test_k43_list_groups_filters_consumer_groups_by_state_and_type() -> None:
    """K43: StatesFilter entries are trimmed and compared case-insensitively with the state name; TypesFilter
    entries parse case-insensitively, an unknown type matches no group (no error); both filters are ANDed."""
    ctx = one_member()
    ctx.join_cg("empty", member_id="e1")
    ctx.cg_heartbeat("empty", member_id="e1", member_epoch=-1)
    ctx.join_with_n_members("classic", 1)

    def listed(states: tuple[str, ...] = (), types: tuple[str, ...] = ()) -> list[str]:
        response = ctx.list_groups(states, types)
        assert response.error_code == 0
        return [g.group_id for g in response.groups]

    assert listed() == ["classic", "empty", "group"]
    assert listed(states=(" STABLE ",)) == ["classic", "group"]
    assert listed(types=("Consumer",)) == ["empty", "group"]
    assert listed(states=("empty",), types=("CONSUMER",)) == ["empty"]
    assert listed(types=("bogus",)) == []


def test_k44_a_listed_consumer_group_shows_its_protocol_state_and_type() -> None:
    """K44: a consumer group is listed with ProtocolType `consumer`, its K39 state and GroupType `consumer`; a
    classic group beside it with GroupType `classic`."""
    ctx = one_member()
    ctx.join_with_n_members("classic", 1)
    by_id = {g.group_id: g for g in ctx.list_groups().groups}
    group = by_id["group"]
    assert (group.protocol_type, group.group_state, group.group_type) == ("consumer", "Stable", "consumer")
    assert by_id["classic"].group_type == "classic"


@pytest.mark.parametrize("version", [0, 5])
def test_k45_describe_groups_of_a_consumer_group_reads_as_dead(version: int) -> None:
    """K45: DescribeGroups (v0-5) describes classic groups only: a consumer group's id answers Dead, no error,
    no protocol type and no members."""
    ctx = one_member()
    (described,) = ctx.describe("group", version=version)
    assert (described.group_id, described.error_code, described.group_state) == ("group", 0, "Dead")
    assert (described.protocol_type, described.members) == ("", [])


def test_k45_describe_groups_v6_of_a_consumer_group_is_not_a_classic_group() -> None:
    """K45 from DescribeGroups v6 (KIP-1043): a consumer group's id is GROUP_ID_NOT_FOUND, state Dead, with Kafka's
    message that the group is not a classic one."""
    ctx = one_member()
    (described,) = ctx.describe("group", version=6)
    assert (described.error_code, described.error_message, described.group_state, described.members) == (
        ErrorCode.GROUP_ID_NOT_FOUND,
        "Group group is not a classic group.",
        "Dead",
        [],
    )


def test_k46_offset_commit_checks_of_a_consumer_group() -> None:
    """K46: an admin commit (epoch < 0) is accepted only into a consumer group without members (else the empty
    member id is UNKNOWN_MEMBER_ID); a member must commit with OffsetCommit v9+ (UNSUPPORTED_VERSION) at exactly
    its current epoch (STALE_MEMBER_EPOCH with Kafka's message); an unknown member id is UNKNOWN_MEMBER_ID."""
    ctx = one_member()
    offsets = {("foo", 0): 5}

    def commit(member_id: str, epoch: int, version: int = 9) -> dict[tuple[str, int], ErrorCode]:
        reply = ctx.commit(group_id="group", member_id=member_id, generation_id=epoch, offsets=offsets, version=version)
        return ctx.commit_errors(reply)

    assert commit("m1", 2) == NO_ERRORS
    assert commit("m1", 2, version=8) == {("foo", 0): ErrorCode.UNSUPPORTED_VERSION}
    assert commit("m1", 1) == {("foo", 0): ErrorCode.STALE_MEMBER_EPOCH}
    assert commit("m1", 3) == {("foo", 0): ErrorCode.STALE_MEMBER_EPOCH}
    assert commit("ghost", 2) == {("foo", 0): ErrorCode.UNKNOWN_MEMBER_ID}
    assert commit("", -1) == {("foo", 0): ErrorCode.UNKNOWN_MEMBER_ID}
    with pytest.raises(GroupError) as stale:
        validate_offset_commit(ctx.cg(), "m1", 1, 9)
    assert stale.value.message == "The received member epoch 1 does not match the expected member epoch 2."
    with pytest.raises(GroupError) as newer:
        validate_offset_commit(ctx.cg(), "m1", 3, 9)
    assert newer.value.message == "Received member epoch 3 is newer than current member epoch 2."
    with pytest.raises(GroupError) as old_version:
        validate_offset_commit(ctx.cg(), "m1", 2, 8)
    assert old_version.value.message == (
        "OffsetCommit version 9 or above must be used by members using the consumer group protocol"
    )
    emptied(ctx)
    assert commit("", -1) == NO_ERRORS
    assert ctx.coordinator.group("group") is None  # the admin commit made no classic group


def test_k48_transactional_commits_are_ready_for_txn_offset_commit() -> None:
    """K48 (Kafka 4.4's validateOffsetCommit with isTransactional): a TxnOffsetCommit without member (empty id,
    epoch -1, no instance id) is accepted even into a group with members; a member's is checked at its epoch but
    with no OffsetCommit version requirement. TxnOffsetCommit itself is served with transactions (issue #15)."""
    ctx = one_member()
    group = ctx.cg()
    validate_offset_commit(group, "", -1, 0, transactional=True)
    with pytest.raises(GroupError) as not_transactional:
        validate_offset_commit(group, "", -1, 9)
    assert not_transactional.value.code == ErrorCode.UNKNOWN_MEMBER_ID
    validate_offset_commit(group, "m1", 2, 0, transactional=True)
    with pytest.raises(GroupError) as with_instance:
        validate_offset_commit(group, "", -1, 0, instance_id="i", transactional=True)
    assert with_instance.value.code == ErrorCode.UNKNOWN_MEMBER_ID
    with pytest.raises(GroupError) as stale:
        validate_offset_commit(group, "m1", 1, 0, transactional=True)
    assert stale.value.code == ErrorCode.STALE_MEMBER_EPOCH


def test_k49_offset_fetch_v9_checks_the_member_epoch() -> None:
    """K49: OffsetFetch v9 naming no member (null id, epoch -1) is an admin fetch; a named member must exist
    (UNKNOWN_MEMBER_ID) and send exactly its current epoch (STALE_MEMBER_EPOCH), as a group-level error."""
    ctx = one_member()
    ctx.commit(group_id="group", member_id="m1", generation_id=2, offsets={("foo", 1): 7}, version=9)

    def fetch(member_id: str | None, epoch: int) -> OffsetFetchResponseGroup:
        request = OffsetFetchRequest(
            groups=[OffsetFetchRequestGroup(group_id="group", member_id=member_id, member_epoch=epoch, topics=None)]
        )
        (group,) = ctx.coordinator.offset_fetch(ctx.ctx(9), request, ctx.now_ms).groups
        return group

    for member_id, epoch in ((None, -1), ("m1", 2)):
        answered = fetch(member_id, epoch)
        assert answered.error_code == 0
        assert [(t.name, p.partition_index, p.committed_offset) for t in answered.topics for p in t.partitions] == [
            ("foo", 1, 7)
        ]
    assert (fetch("m1", 1).error_code, fetch("m1", 1).topics) == (ErrorCode.STALE_MEMBER_EPOCH, [])
    assert fetch("ghost", 2).error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_k50_delete_groups_of_a_consumer_group() -> None:
    """K50: a consumer group with members is NON_EMPTY_GROUP; an Empty one is deleted with its offsets'
    tombstones first, then the group's own (target metadata, partition metadata, group epoch record), and is
    gone."""
    ctx = one_member()
    ctx.commit(group_id="group", member_id="m1", generation_id=2, offsets={("foo", 0): 3, ("foo", 1): 4}, version=9)
    (refused,) = ctx.delete_groups("group").value.results
    assert refused.error_code == ErrorCode.NON_EMPTY_GROUP
    emptied(ctx)
    written = Written(ctx)
    (deleted,) = ctx.delete_groups("group").value.results
    assert (deleted.group_id, deleted.error_code) == ("group", 0)
    assert written.kinds() == [
        "-OffsetCommit",
        "-OffsetCommit",
        "-TargetAssignmentMetadata",
        "-PartitionMetadata",
        "-Metadata",
    ]
    assert ctx.coordinator.consumer_group("group") is None


@pytest.mark.parametrize("empty", [False, True])
def test_k51_offset_delete_refuses_subscribed_topics_whatever_the_state(empty: bool) -> None:
    """K51: OffsetDelete on a consumer group has no state check: every partition of a topic a member subscribes
    to is GROUP_SUBSCRIBED_TO_TOPIC, other topics' offsets are deleted (a tombstone where one exists). An Empty
    group has no subscriptions, so all its offsets can go."""
    ctx = ConsumerGroupTestContext(topics={"foo": 2, "bar": 1})
    ctx.join_cg(member_id="m1", topics=["foo"])
    ctx.commit(group_id="group", member_id="m1", generation_id=2, offsets={("foo", 0): 3, ("bar", 0): 4}, version=9)
    if empty:
        emptied(ctx)
    written = Written(ctx)
    reply = ctx.offset_delete("group", {"foo": [0, 1], "bar": [0]})
    assert reply.value.error_code == 0
    errors = {(t.name, p.partition_index): p.error_code for t in reply.value.topics for p in t.partitions}
    foo = ErrorCode.NONE if empty else ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
    assert errors == {("foo", 0): foo, ("foo", 1): foo, ("bar", 0): ErrorCode.NONE}
    tombstones = [(kind(r), r.key.topic, r.key.partition) for r in written.new()]  # type: ignore[union-attr]
    expected = (
        [("-OffsetCommit", "bar", 0)] if not empty else [("-OffsetCommit", "foo", 0), ("-OffsetCommit", "bar", 0)]
    )
    assert sorted(tombstones) == sorted(expected)
