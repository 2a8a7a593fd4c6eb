"""Shuffle partitions follow the session's default parallelism (its executors' cores), not the driver's cores."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="the pipeline extra is not installed")

from dataclasses import dataclass, field

from pyspark.sql import SparkSession

from pipeline.session import SHUFFLE_PARTITIONS, follow_parallelism


@dataclass
class FakeConf:
    values: dict[str, str] = field(default_factory=dict)

    def set(self, key: str, value: str) -> None:
        self.values[key] = value


@dataclass
class FakeContext:
    defaultParallelism: int


@dataclass
class FakeSession:
    sparkContext: FakeContext
    conf: FakeConf = field(default_factory=FakeConf)


@pytest.mark.parametrize(("cores", "partitions"), [(1, 2), (3, 6), (48, 96)])
def test_a_session_shuffles_into_twice_its_cores(cores: int, partitions: int) -> None:
    session = FakeSession(FakeContext(cores))
    assert follow_parallelism(session) == partitions
    assert session.conf.values == {SHUFFLE_PARTITIONS: str(partitions)}


def test_the_real_session_takes_the_setting_at_run_time(spark: SparkSession) -> None:
    configured = spark.conf.get(SHUFFLE_PARTITIONS)
    try:
        expected = 2 * spark.sparkContext.defaultParallelism
        assert follow_parallelism(spark) == expected
        assert spark.conf.get(SHUFFLE_PARTITIONS) == str(expected)
    finally:
        spark.conf.set(SHUFFLE_PARTITIONS, configured or "4")
