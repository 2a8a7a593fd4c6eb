"""Offsets and admin requests against a KIP-848 consumer group (issue #14): OffsetCommit v9 / OffsetFetch v9 check
the member epoch (generation id = member epoch: STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID), an admin commit (no member,
generation -1) is accepted, DeleteGroups and OffsetDelete respect the members and their subscriptions, DescribeGroups
and a classic JoinGroup meet a group of the other type. Members are driven as in consumer_group.py."""

from __future__ import annotations

from protocol.messages.delete_groups import DeleteGroupsRequest
from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchRequestTopics
from protocol.registry import ApiKey
from tests.differential.registry import Known, scenario
from tests.differential.scenarios.admin import _offset_delete
from tests.differential.scenarios.common import describe, join_body
from tests.differential.scenarios.consumer_group import Member, topic
from tests.differential.scenarios.group_state import commit
from tests.differential.session import Conn, Session


async def _fetch_as(conn: Conn, group: str, topic_name: str, member_id: str, epoch: int, step: str) -> None:
    """OffsetFetch v9 as a member (member id and epoch), for partitions 0 and 1."""
    asked = OffsetFetchRequestGroup(
        group_id=group,
        member_id=member_id,
        member_epoch=epoch,
        topics=[OffsetFetchRequestTopics(name=topic_name, partition_indexes=[0, 1])],
    )
    await conn.call(ApiKey.OFFSET_FETCH, 9, OffsetFetchRequest(groups=[asked]), step)


@scenario("#14 offsets")
async def consumer_group_commit_and_fetch(s: Session) -> None:
    """OffsetCommit v9 at the member's epoch is stored; another epoch is STALE_MEMBER_EPOCH, an unknown member
    UNKNOWN_MEMBER_ID; an admin commit (generation -1, no member) goes through; older versions against the group;
    OffsetFetch v9 with the member's id and epoch checks them the same way."""
    conn = await s.connect("client-o")
    group = s.name("cg-commit")
    name, _ = await topic(s, conn, "cg-commit-t", 2)
    a = Member(s, conn, group, "A")
    await a.join("A joins", [name])
    await a.settle("A settles")
    offsets = {(name, 0): 5}
    epoch, ida = a.epoch, a.member_id
    await commit(conn, group, offsets, "v9 at A's epoch", version=9, generation=epoch, member_id=ida)
    await commit(conn, group, offsets, "v9 at an older epoch", version=9, generation=epoch - 1, member_id=ida)
    await commit(conn, group, offsets, "v9 at a newer epoch", version=9, generation=epoch + 1, member_id=ida)
    await commit(conn, group, offsets, "v9 unknown member", version=9, generation=epoch, member_id="ghost")
    await commit(conn, group, {(name, 1): 7}, "v9 admin commit", version=9, generation=-1, member_id="")
    await commit(conn, group, offsets, "v8 at A's epoch", version=8, generation=epoch, member_id=ida)
    await commit(conn, group, offsets, "v2 at A's epoch", version=2, generation=epoch, member_id=ida)
    await _fetch_as(conn, group, name, ida, epoch, "v9 fetch as A")
    await _fetch_as(conn, group, name, ida, epoch - 1, "v9 fetch at an older epoch")
    await _fetch_as(conn, group, name, "ghost", epoch, "v9 fetch as an unknown member")
    await _fetch_as(conn, group, name, "", -1, "v9 fetch without a member")
    await a.leave("A leaves")
    await commit(conn, group, offsets, "v9 from A after it left", version=9, generation=epoch, member_id=ida)
    await _fetch_as(conn, group, name, "", -1, "v9 fetch after A left")


MIGRATION = (
    "A classic JoinGroup into a consumer group's id is online migration (KIP-848), which is not merged yet (issue #14"
    " in progress): group-broker treats the id as a new classic group."
)
MIGRATION_AFTER = "Follows from the classic JoinGroup above: the id is a classic group on group-broker (issue #14)."


@scenario(
    "#14 admin",
    known=(
        Known("classic JoinGroup, protocol type connect.error_code", 79, 23, MIGRATION),
        Known("classic JoinGroup, protocol type connect.member_id", "<member-id>", "", MIGRATION),
        Known("DescribeGroups v5 once Empty.groups[0].group_state", "Empty", "Dead", MIGRATION_AFTER),
        Known("A joins the deleted group again.error_code", 69, 0, MIGRATION_AFTER),
        Known(
            "A joins the deleted group again.error_message",
            "Group cg-admin-<run> is not a consumer group.",
            None,
            MIGRATION_AFTER,
        ),
        Known("A joins the deleted group again.member_id", None, "<A>", MIGRATION_AFTER),
        Known("A joins the deleted group again.heartbeat_interval_ms", 0, 5000, MIGRATION_AFTER),
        Known("A settles in the new group.settled", False, True, MIGRATION_AFTER),
        Known("A settles in the new group.member_epoch", -1, 2, MIGRATION_AFTER),
        Known(
            "A settles in the new group.owned",
            [],
            [{"topic_id": "<cg-admin-t-id>", "partitions": [0]}],
            MIGRATION_AFTER,
        ),
    ),
)
async def consumer_group_admin(s: Session) -> None:
    """A consumer group with a member: DeleteGroups is NON_EMPTY_GROUP, OffsetDelete refuses the subscribed topic
    (GROUP_SUBSCRIBED_TO_TOPIC) and deletes the other, DescribeGroups answers as Kafka does for a group of the
    consumer type, a classic JoinGroup of another protocol type is INCONSISTENT_GROUP_PROTOCOL; once the member
    left, the group is deleted."""
    conn = await s.connect("client-d")
    group = s.name("cg-admin")
    name, _ = await topic(s, conn, "cg-admin-t", 1)
    other, _ = await topic(s, conn, "cg-admin-u", 1)
    a = Member(s, conn, group, "A")
    await a.join("A joins", [name])
    await a.settle("A settles")
    await commit(conn, group, {(name, 0): 1, (other, 0): 2}, "admin commit", version=9)
    await conn.call(ApiKey.DELETE_GROUPS, 2, DeleteGroupsRequest(groups_names=[group]), "delete while A is in it")
    both = {name: [0], other: [0]}
    await conn.call(ApiKey.OFFSET_DELETE, 0, _offset_delete(group, both), "offset delete")
    await describe(conn, group, "DescribeGroups v5")
    other_type = join_body(group)
    other_type.protocol_type = "connect"
    await conn.call(ApiKey.JOIN_GROUP, 9, other_type, "classic JoinGroup, protocol type connect")
    await a.leave("A leaves")
    await describe(conn, group, "DescribeGroups v5 once Empty")
    await conn.call(ApiKey.DELETE_GROUPS, 2, DeleteGroupsRequest(groups_names=[group]), "delete once Empty")
    await a.join("A joins the deleted group again", [name])
    await a.settle("A settles in the new group")
