"""Burrow's rules in pure Python against Burrow's own 16 vectors and a few edge cases; no Spark involved."""

from __future__ import annotations

import pytest

from pipeline.rules import Status, WindowEntry, calculate_partition_status, evaluate_partition, group_status
from tests.pipeline.vectors import VECTORS, Vector


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: f"vector{v.index}")
def test_burrow_vector(vector: Vector) -> None:
    status, _ = calculate_partition_status(
        vector.window, vector.brokers, vector.current_lag, vector.now_s * 1000, vector.allowed_lag
    )
    assert status == vector.expected


def test_single_commit_with_lag_is_a_stall_unless_minimum_complete_says_wait() -> None:
    ring: list[WindowEntry | None] = [None] * 9 + [WindowEntry(10, 1000, 5)]
    # Not stopped: a recent broker offset (10) shows it was caught up, so both loops are vacuous: STALL.
    assert evaluate_partition(ring, [10, 15], 5, 1500).status == Status.STALL
    result = evaluate_partition(ring, [10, 15], 5, 1500, minimum_complete=0.5)
    assert (result.status, result.complete, result.rule) == (Status.OK, 0.1, "incomplete")


def test_equal_times_are_not_a_stop() -> None:
    window = [WindowEntry(1, 1000, 1), WindowEntry(2, 2000, 2)]
    assert calculate_partition_status(window, [10], 8, 3000)[0] == Status.WARN
    assert calculate_partition_status(window, [10], 8, 3001)[0] == Status.STOP


def test_group_rolls_up_errors() -> None:
    assert group_status([Status.OK, Status.WARN]) == Status.WARN
    assert group_status([Status.OK, Status.STALL]) == Status.ERR
    assert group_status([]) == Status.OK
