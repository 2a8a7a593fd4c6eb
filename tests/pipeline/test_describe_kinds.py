"""``describe`` without Spark (:mod:`pipeline.describe_python`) on KIP-848 groups and transactional commits: the
answers the Spark tables give (``test_kinds_spark.py``), from the same synthetic logs."""

from __future__ import annotations

from pathlib import Path

from pipeline.describe_python import describe_python
from pipeline.synth import Member, SyntheticLog
from tests.pipeline.scenarios import Expected, rebalance_scenario

AT_250_S = "1970-01-01T00:04:10Z"


def test_a_kip848_group_describes_like_its_classic_twin(tmp_path: Path) -> None:
    expected = Expected()
    with SyntheticLog(tmp_path, offsets_partitions=4) as log:
        rebalance_scenario(log, expected, generation=log.consumer_group_epoch)

    rows = describe_python(tmp_path, AT_250_S, group="s-rebalance")

    assert sorted(rows, key=lambda r: r["partition"]) == expected.describe_at_250s


def test_an_epoch_owns_what_its_members_converged_to_before_the_next_epoch(tmp_path: Path) -> None:
    b = Member("b", client_id="cb", assignment={"t": [1]})
    with SyntheticLog(tmp_path, offsets_partitions=1) as log:
        log.create_topic("t", 2)
        log.consumer_group_epoch("g", 1, [Member("a", client_id="ca", assignment={"t": [0, 1]})], 1000)
        log.consumer_group_epoch("g", 2, [Member("a", client_id="ca", assignment={"t": [0]}), b], 2000, converged=False)
        log.member_assignment("g", b, 2, 2100)

    rows = describe_python(tmp_path, "max", group="g")

    assert sorted((r["partition"], r["consumer_id"], r["client_id"]) for r in rows) == [
        (0, "a", "ca"),
        (1, "a", "ca"),  # a has not revoked partition 1 yet: its current assignment is still epoch 1's
        (1, "b", "cb"),
    ]


def test_a_deleted_kip848_group_is_not_described(tmp_path: Path) -> None:
    with SyntheticLog(tmp_path, offsets_partitions=1) as log:
        log.create_topic("t", 1)
        log.consumer_group_epoch("g", 1, [Member("a", assignment={"t": [0]})], 1000)
        log.delete_consumer_group("g", 2000)

    assert describe_python(tmp_path, "max") == []


def test_only_committed_transactions_set_the_committed_offset(tmp_path: Path) -> None:
    with SyntheticLog(tmp_path, offsets_partitions=1) as log:
        log.create_topic("t", 3)
        log.commit("g", "t", 0, 1, 1000)
        log.txn_commit_many("g", 7, [("t", 0, 5)], 2000)
        log.txn_commit_many("g", 8, [("t", 0, 6), ("t", 1, 6)], 2100)
        log.end_txn("g", 8, 2200, commit=False)
        log.end_txn("g", 7, 2300)
        log.txn_commit_many("g", 9, [("t", 2, 7)], 2400)  # never ends

    rows = describe_python(tmp_path, "max", group="g")

    assert sorted((r["partition"], r["current_offset"]) for r in rows) == [(0, 5)]
