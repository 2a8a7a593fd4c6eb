"""KIP-848 groups and transactional commits in the decoded tables (Spark): one log, read once for the module.

The log holds the known-answer rebalance scenario written with KIP-848 group epochs instead of GroupMetadata
records (its expected rebalances and describe are the classic ones: an epoch is a generation), a group whose
members converge after the epoch was written, and transactions of every outcome.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pipeline.synth import Member, SyntheticLog
from tests.pipeline.scenarios import Expected, S, rebalance_scenario

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

AS_OF_MS = 1900 * S


@dataclass
class Tables:
    expected: Expected
    raw: DataFrame
    commits: DataFrame
    generations: DataFrame
    leo: DataFrame
    markers: dict[str, int]


def _transactions(log: SyntheticLog) -> dict[str, int]:
    """Producer 7 commits, 8 aborts (interleaved with 7), 9 stays open, 10 commits one partition twice."""
    g = "k-txn"
    log.txn_commit_many(g, 7, [("rbt", 0, 5)], 1000 * S)
    log.txn_commit_many(g, 8, [("rbt", 0, 6)], 1001 * S)
    abort = log.end_txn(g, 8, 1002 * S, commit=False)
    commit7 = log.end_txn(g, 7, 1003 * S)
    log.txn_commit_many(g, 9, [("rbt", 0, 7)], 1004 * S)
    log.txn_commit_many(g, 10, [("rbt", 1, 3)], 1005 * S)
    log.txn_commit_many(g, 10, [("rbt", 1, 4)], 1006 * S)
    commit10 = log.end_txn(g, 10, 1007 * S)
    return {"abort8": abort, "commit7": commit7, "commit10": commit10}


def _late_convergence(log: SyntheticLog) -> None:
    """Epoch 2 adds ``b``, whose current assignment is written after the epoch record (it reconciled later)."""
    g = "k-late"
    a, b = Member("a", assignment={"rbt": [0, 1]}), Member("b", assignment={"rbt": [1]})
    log.consumer_group_epoch(g, 1, [a], 500 * S)
    log.consumer_group_epoch(g, 2, [Member("a", assignment={"rbt": [0]}), b], 600 * S, converged=False)
    log.member_assignment(g, b, 2, 610 * S)


@pytest.fixture(scope="module")
def tables(spark: SparkSession, workdir: Path) -> Tables:
    from pipeline import extract
    from pipeline.topic_ids import topic_names

    data_dir = workdir / "kinds-log"
    expected = Expected()
    with SyntheticLog(data_dir, offsets_partitions=4) as log:
        rebalance_scenario(log, expected, generation=log.consumer_group_epoch)
        _late_convergence(log)
        markers = _transactions(log)
    raw = extract.read_raw(spark, str(data_dir), "offsets").cache()
    batches = extract.topic_batches(extract.read_raw(spark, str(data_dir), "topics"))
    return Tables(
        expected,
        raw,
        extract.offset_commits(raw),
        extract.group_generations(raw, topic_names(str(data_dir))),
        extract.topic_leo(batches, extract.log_starts(spark, str(data_dir))),
        markers,
    )


def test_a_consumer_groups_epochs_are_its_rebalances(tables: Tables) -> None:
    from pyspark.sql import functions as F

    from pipeline.rebalances import rebalances

    rows = (
        rebalances(tables.generations, tables.commits, as_of_ms=AS_OF_MS)
        .where(F.col("group") == "s-rebalance")
        .orderBy("generation")
        .collect()
    )
    keys = list(tables.expected.rebalances[0])
    assert [{k: r[k] for k in keys} for r in rows] == tables.expected.rebalances


def test_epoch_assignments_have_topic_names_and_describe_like_the_classic_group(tables: Tables) -> None:
    from pyspark.sql import functions as F

    from pipeline.describe import describe

    rows = describe(tables.commits, tables.generations, tables.leo, as_of_ms=250 * S).where(
        F.col("group") == "s-rebalance"
    )
    assert (
        sorted((r.asDict() for r in rows.collect()), key=lambda r: r["partition"]) == tables.expected.describe_at_250s
    )


def test_an_epochs_members_are_as_they_converged_before_the_next_epoch(tables: Tables) -> None:
    from pyspark.sql import functions as F

    from pipeline import extract

    rows = (
        extract.group_assignments(tables.generations.where(F.col("group") == "k-late"))
        .orderBy("generation", "member_id", "partition")
        .collect()
    )
    assert [(r.generation, r.member_id, r.topic, r.partition, r.valid_from_ms, r.valid_to_ms) for r in rows] == [
        (1, "a", "rbt", 0, 500 * S, 600 * S),
        (1, "a", "rbt", 1, 500 * S, 600 * S),
        # a's current assignment is still epoch 1's (it has not revoked partition 1 yet); b's came at 610 s.
        (2, "a", "rbt", 0, 600 * S, None),
        (2, "a", "rbt", 1, 600 * S, None),
        (2, "b", "rbt", 1, 600 * S, None),
    ]


def test_transactional_commits_count_once_committed_at_the_marker(tables: Tables) -> None:
    from pyspark.sql import functions as F

    from pipeline import extract

    m = tables.markers
    expected = [(0, 5, m["commit7"], 1003 * S), (1, 4, m["commit10"], 1007 * S)]
    for raw in (tables.raw, extract.filter_groups(tables.raw, "k-txn", None)):
        rows = extract.offset_commits(raw).where(F.col("group") == "k-txn").orderBy("partition").collect()
        assert [(r.partition, r.committed_offset, r.log_offset, r.ts_ms) for r in rows] == expected


def test_aborted_and_open_transactional_commits_are_flagged_not_counted(tables: Tables) -> None:
    from pipeline.transactions import txn_offset_commits

    rows = txn_offset_commits(tables.raw).orderBy("log_offset").collect()
    m = tables.markers
    assert [(r.producer_id, r.committed_offset, r.txn_state, r.txn_end_offset) for r in rows] == [
        (7, 5, "committed", m["commit7"]),
        (8, 6, "aborted", m["abort8"]),
        (9, 7, "open", None),
        (10, 3, "committed", m["commit10"]),
        (10, 4, "committed", m["commit10"]),
    ]
