"""A small log with every case ``describe`` must get right, and what it must print at each as-of time.

Built with :class:`pipeline.synth.SyntheticLog`; the expected rows are worked out here by hand, never by running
an engine. Times in ms. Topic ``t`` has 3 partitions (partition 2 truncated: its log starts at 100), ``u`` one.

====  ==========================================================================================
1000  generation 1 of ``g`` (m1 owns t-0, t-1) and of ``dead`` (d1 owns u-0); 4 records to t-0
1500  ``dead`` commits u-0 = 1
2000  ``g`` commits t-0 = 3, t-1 = 0 and u-0 = 0 in one batch (u-0 is committed but owned by nobody)
3000  2 records to t-0 stamped exactly 3000; ``g`` commits t-0 = 5, then t-0 = 6 at the same ms
4000  tombstone for ``g`` t-1 (4500: 3 records to t-1)
5000  ``g`` commits t-1 = 2 again
6000  ``dead`` gets a group tombstone
6500  ``g`` commits t-0 = 999 in a batch whose CRC is then broken (damaged: never a commit)
7000  generation 2 of ``g``: m2 owns t-0, t-1, t-2 (t-2 never committed)
7500  2 records to u-0 stamped 7500 after 5 stamped 8000 (a producer clock going back: LEO(8000) = 7)
9000  a commit of t-2 torn mid-append at the end of its segment (incomplete: not read)
====  ==========================================================================================
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.synth import Member, SyntheticLog

OFFSETS_TOPIC = "__consumer_offsets"
M1 = Member("m1", "c1", "/10.0.0.1", {"t": [0, 1]})
M2 = Member("m2", "c2", "/10.0.0.2", {"t": [0, 1, 2]})
D1 = Member("d1", "cd", "/10.0.0.3", {"u": [0]})
LATEST_MS = 8000
#: Where the engines are compared (each Spark describe is a job of about a second, so only three): before any
#: record; 4500 (t-1's tombstone in effect, the dead group still alive with its unowned-looking commit, the two
#: commits of t-0 at 3000 ms decided by position); max = 8000 (dead group gone, damaged batch and torn tail not
#: read, generation 2, t-2 without commit at its truncated start, u-0's batches stamped exactly 8000).
AS_OF_TIMES = ("1970-01-01T00:00:00.500Z", "1970-01-01T00:00:04.500Z", "max")


def build_edges(data_dir: Path) -> None:
    with SyntheticLog(data_dir, offsets_partitions=2) as log:
        log.create_topic("t", 3, start_offsets={2: 100})
        log.create_topic("u", 1)
        log.generation("g", 1, [M1], 1000)
        log.generation("dead", 1, [D1], 1000)
        log.produce("t", 0, 4, 1000)
        log.commit("dead", "u", 0, 1, 1500)
        log.commit_many("g", [("t", 0, 3), ("t", 1, 0), ("u", 0, 0)], 2000)
        log.produce("t", 0, 2, 3000)
        log.commit("g", "t", 0, 5, 3000)
        log.commit("g", "t", 0, 6, 3000)
        log.offset_tombstone("g", "t", 1, 4000)
        log.produce("t", 1, 3, 4500)
        log.commit("g", "t", 1, 2, 5000)
        log.group_tombstone("dead", 6000)
        log.flush()
        segment = next((data_dir / f"{OFFSETS_TOPIC}-{log.offsets_partition('g')}").glob("*.log"))
        log.commit("g", "t", 0, 999, 6500)
        log.flush()
        _flip_last_byte(segment)
        log.generation("g", 2, [M2], 7000)
        log.produce("u", 0, 5, 8000)
        log.produce("u", 0, 2, 7500)
        log.tear_commit("g", "t", 2, 50, 9000)


def _flip_last_byte(segment: Path) -> None:
    """Break the CRC of the segment's last batch (its last record's value): the batch framing stays intact."""
    data = bytearray(segment.read_bytes())
    data[-1] ^= 0xFF
    segment.write_bytes(bytes(data))


def row(
    group: str, topic: str, partition: int, current: int | None, leo: int | None, member: Member | None
) -> dict[str, Any]:
    return {
        "group": group,
        "topic": topic,
        "partition": partition,
        "current_offset": current,
        "log_end_offset": leo,
        "lag": None if current is None or leo is None else leo - current,
        "consumer_id": None if member is None else member.member_id,
        "host": None if member is None else member.client_host,
        "client_id": None if member is None else member.client_id,
    }


def ordered(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows in a stable order for comparison (any engine may return them in any order)."""
    return sorted(rows, key=lambda r: tuple((v is None, "" if v is None else str(v)) for v in r.values()))
