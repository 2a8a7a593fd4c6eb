"""Persisted record formats, rules #44-#46 of design/group-protocol.md: what each broker wrote to
`__consumer_offsets`, read back with Fetch and decoded, compared record by record (key and value versions and
fields; timestamps and member ids are normalised like any answer). Equal transcripts mean our records are
byte-compatible with Kafka's: a Kafka broker could load our log, and we load Kafka's."""

from __future__ import annotations

from typing import Any

from coordinator.hashing import partition_for
from protocol.consumer_offsets import ClassicKey, decode_key, decode_value, key_version
from protocol.messages.delete_groups import DeleteGroupsRequest
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.group_metadata_value import GroupMetadataValue
from protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from protocol.messages.offset_commit_key import OffsetCommitKey
from protocol.records import iter_batches
from protocol.registry import ApiKey
from protocol.versioned import read_version
from tests.differential.registry import Known, scenario
from tests.differential.scenarios.group_state import ask, commit, make_topic, stable_group
from tests.differential.session import Conn, Session

OFFSETS_TOPIC = "__consumer_offsets"
FETCH_V = 12  # the newest Fetch that names topics (v13+ use topic ids)


async def _records_of(conn: Conn, group: str, partitions: int) -> list[dict[str, Any]] | None:
    """Every record of ``group`` in its `__consumer_offsets` partition, in log order, decoded; None if the fetch
    failed (its error code then shows up in the transcript instead)."""
    fetch = FetchRequest(
        max_wait_ms=0,
        min_bytes=0,
        topics=[
            FetchTopic(
                topic=OFFSETS_TOPIC,
                partitions=[
                    FetchPartition(
                        partition=partition_for(group, partitions), fetch_offset=0, partition_max_bytes=1 << 20
                    )
                ],
            )
        ],
    )
    answer = await ask(conn, ApiKey.FETCH, FETCH_V, fetch)
    if answer is None or answer.error_code or answer.responses[0].partitions[0].error_code:
        return None
    found: list[dict[str, Any]] = []
    for _, batch in iter_batches(answer.responses[0].partitions[0].records or b""):
        if batch.is_control:  # transaction markers of other scenarios' TxnOffsetCommits in the same partition
            continue
        for record in batch.records:
            if record.key is None:
                continue
            key = decode_key(record.key)
            if not isinstance(key, ClassicKey) or key.group != group:  # KIP-848 records are not compared here
                continue
            value = decode_value(key, record.value)
            found.append(
                {
                    "key_version": key_version(record.key),
                    "key": key,
                    "value_version": None if record.value is None else read_version(record.value, "value"),
                    "value": value,
                }
            )
    return found


def _is_creation_record(record: dict[str, Any]) -> bool:
    """Kafka's new coordinator writes an empty GroupMetadata record (generation 0, no protocol type, no members)
    when JoinGroup creates a group, to commit the new group in its timeline data structures."""
    value = record["value"]
    return isinstance(value, GroupMetadataValue) and value.generation == 0 and not value.protocol_type


async def _note_records(s: Session, conn: Conn, group: str, step: str, versions: bool = True) -> None:
    """The records, with two facts split off so that each difference from Kafka is one small, stable leaf: which
    OffsetCommitValue versions were written, and whether a creation record was."""
    records = await _records_of(conn, group, s.setting("offsets.topic.num.partitions"))
    if records is None:
        s.note(step, None)
        return
    commits = [r for r in records if isinstance(r["key"], OffsetCommitKey) and r["value"] is not None]
    found = sorted({r.pop("value_version") for r in commits})
    if versions:
        s.note(f"{step}: offset commit value versions", found)
    s.note(f"{step}: a creation record", any(_is_creation_record(r) for r in records))
    s.note(step, [r for r in records if not _is_creation_record(r)])


V4 = Known(
    "simple group's records: offset commit value versions[1]",
    3,
    4,
    "Kafka 4.4 writes OffsetCommitValue v4, the first flexible version; group-broker keeps v3, which every Kafka "
    "since 2.1 and tools that read __consumer_offsets (Burrow 1.2.1) decode. Both brokers read both versions.",
)
CREATION = (
    "Kafka's new coordinator writes an empty group record (generation 0) when JoinGroup creates a group, to "
    "commit it in its in-memory timeline; group-broker writes a group's first record with its first assignment. "
    "Only a group created but never synced differs after a restart (Kafka reloads it Empty); its members rejoin."
)


@scenario(
    "#44",
    known=(
        V4,
        Known("consumer group's records: a creation record", False, True, CREATION),
    ),
)
async def records_after_commit_and_rebalance(s: Session) -> None:
    """A simple group's commits (OffsetCommitValue v3, and v1 when v2-v4 give a retention), then a consumer group
    that completes a rebalance, commits and empties (GroupMetadataValue v3 with and without members); deleting a
    group writes tombstones for its offsets (and none for a group record it never had)."""
    conn = await s.connect("client-a")
    topic, simple, group = s.name("rec-t"), s.name("rec-simple"), s.name("rec-group")
    await make_topic(s, conn, topic, 2)
    await commit(conn, simple, {(topic, 0): 5, (topic, 1): 6}, "simple commit", metadata="meta")
    await commit(conn, simple, {(topic, 0): 7}, "v2 commit with retention", version=2, retention_ms=60_000)
    await _note_records(s, conn, simple, "simple group's records")
    ida, generation = await stable_group(s, conn, group, "A", "A forms a group", session_ms=10_000)
    await commit(conn, group, {(topic, 1): 9}, "A commits", generation=generation, member_id=ida)
    leave = LeaveGroupRequest(group_id=group, members=[MemberIdentity(member_id=ida)])
    await conn.call(ApiKey.LEAVE_GROUP, 5, leave, "A leaves")
    await _note_records(s, conn, group, "consumer group's records", versions=False)
    await conn.call(ApiKey.DELETE_GROUPS, 2, DeleteGroupsRequest(groups_names=[simple]), "delete the simple group")
    await _note_records(s, conn, simple, "simple group's records after its deletion", versions=False)


@scenario("#46", known=(Known("the group's records: a creation record", False, True, CREATION),))
async def records_of_a_static_member(s: Session) -> None:
    """A static member's group record carries its instance id (GroupMetadataValue v3)."""
    conn = await s.connect("client-s")
    group = s.name("rec-static")
    await stable_group(s, conn, group, "S", "static S forms a group", instance_id="inst-s", rebalance_ms=7000)
    await _note_records(s, conn, group, "the group's records")
