"""Compaction never changes the consumer groups a `__consumer_offsets` partition loads into (issue #14: "Compaction
and tombstones work for them").

A real coordinator writes, through the broker's own OffsetsLog, a partition holding consumer groups' histories:
joins and reconciliations, offsets, a member leaving (its three tombstones), a group deleted (its member, group and
offset tombstones) and a group deleted and then created again under the same id. The log cleaner (storage/cleaner.py)
then compacts it twice: once keeping the tombstones (their delete horizon not reached), once after
`log.cleaner.delete.retention.ms`, when they go, as for classic records. A coordinator loading each version of the
partition must see exactly the groups it sees in the uncompacted log, the group stopped mid-reconciliation included.
Anything the coordinator forgets to tombstone would come back here: in an uncompacted log a later group tombstone
hides it, once compacted only the record itself is left.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from broker.offsets_log import OFFSETS_TOPIC
from coordinator.records import CoordinatorRecord
from protocol.errors import ErrorCode
from protocol.messages.offset_commit_key import OffsetCommitKey
from storage.cleaner import CleanerConfig, clean
from storage.dump import main as dump_main
from storage.partition_log import PartitionLog
from tests.broker.offsets_log_store import WALL_MS, LogStore
from tests.coordinator.consumer_group.harness import ConsumerGroupTestContext

RETENTION_MS = 86_400_000  # log.cleaner.delete.retention.ms's default
TOPICS = {"foo": 4, "bar": 2}


def _partition(store: LogStore) -> PartitionLog:
    partition_log = store.manager.get(OFFSETS_TOPIC, 0)
    assert partition_log is not None
    return partition_log


def _context(store: LogStore) -> ConsumerGroupTestContext:
    """A coordinator owning the one partition, loaded from the store: a broker (re)starting over that log."""
    return ConsumerGroupTestContext(dict(TOPICS), store=store, offsets_topic_num_partitions=1)


def _owned(ctx: ConsumerGroupTestContext, group_id: str, member_id: str) -> dict[str, list[int]]:
    """What the member holds now, by topic name: what its next heartbeat reports (it revokes at once)."""
    state = ctx.cg(group_id).members[member_id].assignment
    names = {image.topic_id: name for name, image in ctx.cg(group_id).subscription_metadata.items()}
    owned: dict[str, list[int]] = {}
    for topic_id, partition in state.assigned_partitions:
        owned.setdefault(names[topic_id], []).append(partition)
    return owned


def _beat(ctx: ConsumerGroupTestContext, group_id: str, member_id: str) -> None:
    epoch = ctx.cg(group_id).members[member_id].member_epoch
    response = ctx.cg_heartbeat(group_id, member_id, epoch, owned=_owned(ctx, group_id, member_id)).value
    assert response.error_code == ErrorCode.NONE, response


def _settle(ctx: ConsumerGroupTestContext, group_id: str) -> None:
    """Heartbeat every member until the group is Stable."""
    for _ in range(10):
        if ctx.cg(group_id).state.value == "Stable":
            return
        for member_id in list(ctx.cg(group_id).members):
            _beat(ctx, group_id, member_id)
    raise AssertionError(f"{group_id} never became Stable")


def _commit(ctx: ConsumerGroupTestContext, group_id: str, member_id: str, offsets: dict[tuple[str, int], int]) -> None:
    epoch = ctx.cg(group_id).members[member_id].member_epoch
    reply = ctx.commit(group_id=group_id, member_id=member_id, generation_id=epoch, offsets=offsets, version=9)
    assert set(ctx.commit_errors(reply).values()) == {ErrorCode.NONE}


def _leave(ctx: ConsumerGroupTestContext, group_id: str, member_id: str) -> None:
    assert ctx.cg_heartbeat(group_id, member_id, -1).value.member_epoch == -1


def _history(ctx: ConsumerGroupTestContext) -> None:
    """Every kind of consumer-group record, superseded many times over, and tombstones of each kind."""
    # "group": three members, offsets committed and re-committed, m2 leaves; it ends mid-reconciliation.
    ctx.join_cg("group", "m1", ["foo", "bar"])
    _settle(ctx, "group")
    ctx.join_cg("group", "m2", ["foo"])
    _settle(ctx, "group")
    for round_number in range(3):
        _commit(ctx, "group", "m1", {("foo", p): 100 * round_number + p for p in range(4)})
    ctx.join_cg("group", "m3", ["foo", "bar"])
    _settle(ctx, "group")
    _leave(ctx, "group", "m2")
    _settle(ctx, "group")
    ctx.join_cg("group", "m4", ["foo"])
    _beat(ctx, "group", "m1")  # told to revoke for m4; it does not acknowledge before the log is read
    # "gone": a group whose last member leaves, then DeleteGroups removes it with its offsets.
    ctx.join_cg("gone", "g1", ["bar"])
    _settle(ctx, "gone")
    _commit(ctx, "gone", "g1", {("bar", 0): 5})
    _leave(ctx, "gone", "g1")
    assert ctx.delete_groups("gone").value.results[0].error_code == ErrorCode.NONE
    # "reborn": deleted, then created again by other members: nothing of its first life may come back.
    ctx.join_cg("reborn", "old1", ["foo"])
    ctx.join_cg("reborn", "old2", ["foo", "bar"])
    _settle(ctx, "reborn")
    _commit(ctx, "reborn", "old1", {("foo", 1): 9})
    _leave(ctx, "reborn", "old1")
    _leave(ctx, "reborn", "old2")
    assert ctx.delete_groups("reborn").value.results[0].error_code == ErrorCode.NONE
    ctx.join_cg("reborn", "new1", ["bar"])
    _settle(ctx, "reborn")


def _groups(ctx: ConsumerGroupTestContext) -> dict[str, dict[str, Any]]:
    """Everything a loaded consumer group is made of, by group id."""
    return {
        group.group_id: {
            "epochs": (group.group_epoch, group.assignment_epoch),
            "state": group.state.value,
            "members": dict(group.members),
            "target": dict(group.target),
            "metadata": dict(group.subscription_metadata),
            "owners": dict(group.owners),
            "offsets": sorted(group.offsets.items()),
        }
        for group in ctx.coordinator.consumer_groups()
    }


def _loaded(store: LogStore) -> dict[str, dict[str, Any]]:
    ctx = _context(store)
    assert ctx.coordinator.load_failures() == {}
    assert ctx.coordinator.groups() == []  # no classic group made up from consumer-group records or offsets
    return _groups(ctx)


def _tombstones(log: PartitionLog) -> int:
    return sum(1 for batch in log.iter_batches_from() for record in batch.records if record.value is None)


def _count(log: PartitionLog) -> int:
    return sum(len(batch.records) for batch in log.iter_batches_from())


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LogStore]:
    log_store = LogStore(tmp_path / "data", 1, {"internal.segment.bytes": "2048"}, immediate=True)
    yield log_store
    log_store.manager.close()


def _clean(store: LogStore, now_ms: int) -> None:
    result = clean(_partition(store), now_ms, config=CleanerConfig(delete_retention_ms=RETENTION_MS))
    assert result.aborted is None


def test_compacting_a_partition_of_consumer_group_records_loads_the_same_groups(store: LogStore) -> None:
    written = _context(store)
    _history(written)
    expected = _groups(written)
    assert sorted(expected) == ["group", "reborn"]
    assert expected["group"]["state"] == "Reconciling" and sorted(expected["group"]["members"]) == ["m1", "m3", "m4"]
    assert list(expected["reborn"]["members"]) == ["new1"] and expected["reborn"]["offsets"] == []
    assert _loaded(store) == expected  # the uncompacted log

    log = _partition(store)
    log.roll(now_ms=WALL_MS)  # the active segment is never cleaned: close it
    before = (_count(log), _tombstones(log))
    _clean(store, WALL_MS)
    assert _loaded(store) == expected
    kept = (_count(log), _tombstones(log))
    assert kept[0] < before[0] // 2, f"compaction kept {kept[0]} of {before[0]} records"
    assert kept[1] > 0, "the tombstones stay until their delete horizon"

    _clean(store, WALL_MS + RETENTION_MS)  # past log.cleaner.delete.retention.ms: the tombstones go
    assert _loaded(store) == expected
    assert _tombstones(log) == 0
    assert _count(log) < kept[0]
    store.reopen()  # and the same from disk, as a restarted broker reads it
    assert _loaded(store) == expected


def _expected_key_text(record: CoordinatorRecord) -> str:
    """How dump-log should name a record's key, spelled here from the typed key: Kafka's record type in snake case,
    then the ids."""
    key = record.key
    if isinstance(key, OffsetCommitKey):
        return f"offset_commit::group={key.group},partition={key.topic}-{key.partition}"
    kind = re.sub(r"(?<!^)(?=[A-Z])", "_", type(key).__name__.removesuffix("Key")).lower()
    member_id = getattr(key, "member_id", None)
    ids = f"group={key.group_id}" + ("" if member_id is None else f",member={member_id}")  # type: ignore[union-attr]
    return f"{kind}::{ids}"


def _dumped(directory: Path) -> list[tuple[str, str]]:
    """(key, payload) of every record `python -m storage.dump --offsets-decoder` prints for the partition."""
    out, err = io.StringIO(), io.StringIO()
    assert dump_main([str(directory), "--offsets-decoder"], out, err) == 0, err.getvalue()
    records = [line.split(" key: ", 1)[1] for line in out.getvalue().splitlines() if line.startswith("| offset:")]
    return [tuple(record.split(" payload: ", 1)) for record in records]  # type: ignore[misc]


def test_dump_log_decodes_every_record_of_a_group_broker_written_consumer_group(store: LogStore) -> None:
    ctx = _context(store)
    _history(ctx)
    records = store.records(0)
    dumped = _dumped(_partition(store).directory)
    assert [key for key, _ in dumped] == [_expected_key_text(r) for r in records]
    assert [payload == "<DELETE>" for _, payload in dumped] == [r.value is None for r in records]
    assert not [p for _, p in dumped if p.startswith("<undecodable") or p.startswith("unknown")]
    kinds = {key.split("::", 1)[0] for key, _ in dumped}
    assert {
        "consumer_group_metadata",
        "consumer_group_partition_metadata",
        "consumer_group_member_metadata",
        "consumer_group_target_assignment_metadata",
        "consumer_group_target_assignment_member",
        "consumer_group_current_member_assignment",
        "offset_commit",
    } == kinds
    # m1's last state as written: told to revoke for m4, at its epoch, the partitions it must give up pending
    m1 = [json.loads(p) for k, p in dumped if k == "consumer_group_current_member_assignment::group=group,member=m1"]
    assert m1[-1]["memberEpoch"] == ctx.cg("group").members["m1"].member_epoch
    assert m1[-1]["partitionsPendingRevocation"] and m1[-1]["state"] == 1  # UNREVOKED_PARTITIONS

    _partition(store).roll(now_ms=WALL_MS)
    _clean(store, WALL_MS)  # the compacted partition still dumps decoded, tombstones included
    compacted = _dumped(_partition(store).directory)
    assert [key for key, _ in compacted] == [_expected_key_text(r) for r in store.records(0)]
    assert "<DELETE>" in {p for _, p in compacted}
    assert not [p for _, p in compacted if p.startswith("<undecodable") or p.startswith("unknown")]
