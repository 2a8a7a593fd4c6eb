"""OffsetCommit and OffsetFetch rules #32-#39 of design/group-protocol.md (topics are created by each scenario: auto-
creation is off on both brokers).

Retention (#36) is compared in retention.py. A pending transactional commit (#38 with require_stable) needs
transactions, which the broker does not have; #39's error remapping needs a failing `__consumer_offsets` write, which
one healthy node cannot produce."""

from __future__ import annotations

from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchRequestTopics
from protocol.registry import ApiKey
from tests.differential.registry import scenario
from tests.differential.scenarios.common import describe, join, member_id_of, send_join, sync_body
from tests.differential.scenarios.group_state import call_unordered, commit, fetch_offsets, make_topic, stable_group
from tests.differential.session import Session

METADATA_MAX = 4096  # offset.metadata.max.bytes, Kafka's default on both brokers


@scenario("#32")
async def commit_to_simple_group(s: Session) -> None:
    """Generation -1 and no member id on a new group: stored, and the group exists Empty with no protocol type."""
    conn = await s.connect()
    topic, group = s.name("simple-t"), s.name("simple")
    await make_topic(s, conn, topic, 2)
    await commit(conn, group, {(topic, 0): 5, (topic, 1): 7}, "v8 commit, generation -1", metadata="m")
    await commit(conn, group, {(topic, 0): 6}, "v2 commit, generation -1", version=2)
    await describe(conn, group, "described")
    await fetch_offsets(conn, group, {topic: [0, 1]}, "fetched")
    await commit(conn, group, {(topic, 0): 9}, "commit as a member of the Empty group", generation=1, member_id="x")


@scenario("#33")
async def commit_to_missing_group_with_generation(s: Session) -> None:
    """A generation >= 0 for a group that does not exist: ILLEGAL_GENERATION up to v8, GROUP_ID_NOT_FOUND in v9."""
    conn = await s.connect()
    topic = s.name("missing-t")
    await make_topic(s, conn, topic, 1)
    for version in (2, 5, 7, 8, 9):
        group = s.name(f"missing-v{version}")
        await commit(conn, group, {(topic, 0): 1}, f"v{version}", version=version, generation=1, member_id="m")
        await describe(conn, group, f"v{version}: described")


@scenario("#32")
async def commit_member_checks(s: Session) -> None:
    """A Stable group: no member id is UNKNOWN_MEMBER_ID, an unknown member too, a wrong generation is
    ILLEGAL_GENERATION, the member's own commit is stored."""
    conn = await s.connect()
    topic, group = s.name("checks-t"), s.name("checks")
    await make_topic(s, conn, topic, 1)
    ida, generation = await stable_group(s, conn, group, "A", "A forms the group")
    offsets = {(topic, 0): 3}
    await commit(conn, group, offsets, "generation -1, no member")
    await commit(conn, group, offsets, "unknown member", generation=generation, member_id="ghost")
    await commit(conn, group, offsets, "wrong generation", generation=generation + 1, member_id=ida)
    await commit(conn, group, offsets, "no generation, member A", generation=-1, member_id=ida)
    await commit(conn, group, offsets, "A commits", generation=generation, member_id=ida)
    await commit(
        conn, group, offsets, "A with a wrong instance id", generation=generation, member_id=ida, instance_id="inst"
    )
    await fetch_offsets(conn, group, {topic: [0]}, "fetched")
    idp = await member_id_of(s, conn, group, "P", "P gets an id (pending)")
    await commit(conn, group, offsets, "pending member P", generation=generation, member_id=idp)


@scenario("#32")
async def commit_by_static_member(s: Session) -> None:
    """A static member commits with its instance id; then another member id for that instance id, and the
    member without its instance id (member checks of #18 applied to commits)."""
    conn = await s.connect()
    topic, group = s.name("static-c-t"), s.name("static-c")
    await make_topic(s, conn, topic, 1)
    ids, generation = await stable_group(s, conn, group, "S", "static S forms the group", instance_id="inst-s")
    offsets = {(topic, 0): 1}
    await commit(conn, group, offsets, "S commits", generation=generation, member_id=ids, instance_id="inst-s")
    await commit(
        conn, group, offsets, "another id for inst-s", generation=generation, member_id="x", instance_id="inst-s"
    )
    await commit(conn, group, offsets, "S without its instance id", generation=generation, member_id=ids)


@scenario("#32")
async def commit_while_rebalancing(s: Session) -> None:
    """CompletingRebalance answers REBALANCE_IN_PROGRESS; PreparingRebalance still stores the previous
    generation's commit."""
    a, b = await s.connect("client-a"), await s.connect("client-b")
    topic, group = s.name("rebal-t"), s.name("rebal")
    await make_topic(s, a, topic, 1)
    joined = await join(s, a, group, "A", "A joins")
    ida, generation = joined.member_id, joined.generation_id
    await commit(a, group, {(topic, 0): 1}, "CompletingRebalance", generation=generation, member_id=ida)
    await a.call(ApiKey.SYNC_GROUP, 5, sync_body(group, generation, ida, plan={ida: b""}), "A syncs")
    idb = await member_id_of(s, b, group, "B", "B gets an id")
    pb = send_join(b, group, idb)
    await b.parked(pb, "B waits for A", 200)
    await commit(a, group, {(topic, 0): 2}, "PreparingRebalance", generation=generation, member_id=ida)
    await fetch_offsets(a, group, {topic: [0]}, "fetched")
    pa = send_join(a, group, ida)
    await a.reply(pa, "A rejoins")
    await b.reply(pb, "B joined")


@scenario("#34")
async def commit_per_partition_errors(s: Session) -> None:
    """Unknown topics and partitions, and metadata longer than offset.metadata.max.bytes, fail only their own
    partitions; the others are stored."""
    conn = await s.connect()
    topic, group = s.name("parts-t"), s.name("parts")
    await make_topic(s, conn, topic, 2)
    offsets = {(topic, 0): 1, (topic, 5): 1, (s.name("no-such-topic"), 0): 1}
    await commit(conn, group, offsets, "unknown topic and partition")
    await commit(conn, group, {(topic, 1): 2}, "metadata at the limit", metadata="x" * METADATA_MAX)
    await commit(conn, group, {(topic, 0): 3}, "metadata over the limit", metadata="x" * (METADATA_MAX + 1))
    await commit(conn, group, {(topic, 0): 4}, "null metadata", metadata=None)
    await fetch_offsets(conn, group, None, "fetched, all partitions")


@scenario("#35")
async def commit_retention_v2_to_v4(s: Session) -> None:
    """OffsetCommit v2-v4 carry retention_time_ms: accepted and the offset is stored (its expire timestamp shows
    in the record, see records_after_commit_and_rebalance)."""
    conn = await s.connect()
    topic, group = s.name("retain-t"), s.name("retain")
    await make_topic(s, conn, topic, 1)
    for version in (2, 3, 4):
        await commit(conn, group, {(topic, 0): version}, f"v{version}", version=version, retention_ms=60_000)
        await fetch_offsets(conn, group, {topic: [0]}, f"v{version}: fetched", version=3)


@scenario("#37")
async def fetch_missing_group_and_partitions(s: Session) -> None:
    """A missing group, or partitions never committed: offset -1, error NONE, for every version; null topics (v2+)
    lists every committed partition."""
    conn = await s.connect()
    topic, group = s.name("fetch-t"), s.name("fetch")
    await make_topic(s, conn, topic, 3)
    await commit(conn, group, {(topic, 1): 11}, "commit one partition", metadata="meta")
    for version in (1, 2, 5, 7):
        await fetch_offsets(conn, s.name("fetch-missing"), {topic: [0]}, f"v{version} missing group", version=version)
        await fetch_offsets(conn, group, {topic: [0, 1, 2]}, f"v{version} partitions", version=version)
    await fetch_offsets(conn, group, None, "v7 all partitions")
    await fetch_offsets(conn, s.name("fetch-missing"), None, "v7 all partitions of a missing group")
    await fetch_offsets(conn, group, {s.name("fetch-no-topic"): [0]}, "v7 unknown topic")


@scenario("#37")
async def fetch_v8_many_groups(s: Session) -> None:
    """v8 asks for several groups at once, each with its own topics (or null for all) and its own error code."""
    conn = await s.connect()
    topic, one, two = s.name("multi-t"), s.name("multi-1"), s.name("multi-2")
    await make_topic(s, conn, topic, 2)
    await commit(conn, one, {(topic, 0): 1}, "commit group one")
    await commit(conn, two, {(topic, 1): 2}, "commit group two")
    groups = [
        OffsetFetchRequestGroup(group_id=one, topics=[OffsetFetchRequestTopics(name=topic, partition_indexes=[0, 1])]),
        OffsetFetchRequestGroup(group_id=two, topics=None),
        OffsetFetchRequestGroup(group_id=s.name("multi-missing"), topics=None),
    ]
    for version in (8, 9):
        await call_unordered(s, conn, ApiKey.OFFSET_FETCH, version, OffsetFetchRequest(groups=groups), f"v{version}")
    await conn.call(
        ApiKey.OFFSET_FETCH, 8, OffsetFetchRequest(groups=groups[:1], require_stable=True), "v8 require_stable"
    )
    as_member = OffsetFetchRequestGroup(group_id=one, member_id="someone", member_epoch=3, topics=None)
    await conn.call(ApiKey.OFFSET_FETCH, 9, OffsetFetchRequest(groups=[as_member]), "v9 with a member id and epoch")


@scenario("#38")
async def fetch_require_stable_without_transactions(s: Session) -> None:
    """require_stable (v7+) with no pending transactional commit returns the committed offsets as usual."""
    conn = await s.connect()
    topic, group = s.name("stable-t"), s.name("stable")
    await make_topic(s, conn, topic, 1)
    await commit(conn, group, {(topic, 0): 8}, "commit")
    await fetch_offsets(conn, group, {topic: [0]}, "v7 require_stable", require_stable=True)
    await fetch_offsets(conn, s.name("stable-missing"), {topic: [0]}, "v7 missing group", require_stable=True)
