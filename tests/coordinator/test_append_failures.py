"""The coordinator over the broker's real offsets log: failed writes are answered at once and only to their owners.

A commit that cannot be written (a 40,000-character group id, a full disk) gets Kafka's remapped error in the same
event-loop turn, with no virtual time passing (never `offsets.commit.timeout.ms` later), while the other groups'
commits queued in that turn are written and acknowledged.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from coordinator.state import GroupState
from protocol.errors import ErrorCode
from storage import segment as segment_module
from tests.broker.offsets_log_store import LogStore
from tests.coordinator.harness import CoordinatorTestContext, completing

PARTITIONS = 4
HUGE_GROUP = "x" * 40_000


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LogStore]:
    log_store = LogStore(tmp_path / "data", PARTITIONS)
    yield log_store
    log_store.manager.close()


def context(store: LogStore) -> CoordinatorTestContext:
    return CoordinatorTestContext(store=store, offsets_topic_num_partitions=PARTITIONS)  # type: ignore[arg-type]


def disk_full(monkeypatch: pytest.MonkeyPatch) -> None:
    def pwrite(fd: int, data: memoryview, offset: int) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(segment_module.os, "pwrite", pwrite)


def test_an_unencodable_commit_is_refused_alone_in_the_same_turn(store: LogStore) -> None:
    ctx = context(store)
    huge = ctx.commit(group_id=HUGE_GROUP, offsets={("t", 0): 7})
    other = ctx.commit(group_id="g2", offsets={("t", 0): 8})
    assert not huge.done and not other.done  # both parked until the flush at the end of the turn
    store.end_turn()
    assert ctx.commit_errors(huge) == {("t", 0): ErrorCode.UNKNOWN_SERVER_ERROR}
    assert ctx.commit_errors(other) == {("t", 0): ErrorCode.NONE}
    assert ctx.now_ms == 0  # answered at once, not by offsets.commit.timeout.ms
    assert ctx.fetched("g2", {"t": [0]})[("t", 0)][0] == 8
    assert ctx.fetched(HUGE_GROUP, {"t": [0]})[("t", 0)][0] == -1  # nothing acknowledged that was not written


def test_a_commit_too_large_for_one_batch_is_refused_alone_with_unknown_server_error(tmp_path: Path) -> None:
    """Kafka 4 answers a coordinator write larger than max.message.bytes with UNKNOWN_SERVER_ERROR."""
    store = LogStore(tmp_path / "data", PARTITIONS, {"max.message.bytes": "4000"})
    ctx = context(store)
    large = ctx.commit(group_id="g1", offsets={("t", p): 1 for p in range(40)}, metadata="m" * 100)
    small = ctx.commit(group_id="g2", offsets={("t", 0): 2})
    store.end_turn()
    assert set(ctx.commit_errors(large).values()) == {ErrorCode.UNKNOWN_SERVER_ERROR}
    assert ctx.commit_errors(small) == {("t", 0): ErrorCode.NONE}
    assert ctx.now_ms == 0
    store.manager.close()


def test_a_commit_that_hits_a_full_disk_answers_not_coordinator_at_once(
    store: LogStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = context(store)
    reply = ctx.commit(group_id="g", offsets={("t", 0): 3, ("t", 1): 4})
    with monkeypatch.context() as patch:
        disk_full(patch)
        store.end_turn()
    assert ctx.commit_errors(reply) == {("t", 0): ErrorCode.NOT_COORDINATOR, ("t", 1): ErrorCode.NOT_COORDINATOR}
    assert ctx.now_ms == 0
    assert ctx.fetched("g", {"t": [0]})[("t", 0)][0] == -1
    # Space is back: the same commit succeeds without any restart.
    again = ctx.commit(group_id="g", offsets={("t", 0): 3})
    store.end_turn()
    assert ctx.commit_errors(again) == {("t", 0): ErrorCode.NONE}


def test_a_sync_group_that_hits_a_full_disk_answers_not_coordinator_at_once(
    store: LogStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = context(store)
    members, leader, generation = completing(ctx, 2)
    follower = next(m for m in members if m != leader)
    waiting = ctx.sync(group_id="g", member_id=follower, generation_id=generation)
    lead = ctx.sync(group_id="g", member_id=leader, generation_id=generation, assignments={leader: b"L"})
    with monkeypatch.context() as patch:
        disk_full(patch)
        store.end_turn()
    assert lead.value.error_code == ErrorCode.NOT_COORDINATOR
    assert waiting.value.error_code == ErrorCode.NOT_COORDINATOR
    assert ctx.now_ms == 0
    assert ctx.state("g") is GroupState.PREPARING_REBALANCE  # Kafka starts a new rebalance
