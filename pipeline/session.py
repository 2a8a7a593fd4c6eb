"""Build the SparkSession the pipeline runs on, with the settings every run needs.

* Workers must run the driver's interpreter (``PYSPARK_PYTHON``): otherwise Spark starts ``python3`` from PATH,
  which lacks pyarrow and the project, and fails deep inside a task.
* A master given by ``spark-submit`` (``spark.master`` already in the conf) wins over ``--master``'s default.
* Shuffles follow the session's default parallelism (`follow_parallelism`), not the driver's cores: on a cluster
  the executors' cores are what a shuffle can use.
* Java is checked up front (:func:`pipeline.preflight.check_java`) so a missing or broken JDK is one clear
  sentence, not a py4j stack trace.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Protocol

from pyspark import SparkConf
from pyspark.sql import SparkSession

from pipeline.preflight import check_java
from pipeline.source import KafkaLogDataSource

__all__ = ["DEFAULT_MASTER", "build_session", "follow_parallelism"]

DEFAULT_MASTER = "local[*]"
SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
#: Shuffle partitions per core of the session (unless `spark.sql.shuffle.partitions` is configured).
SHUFFLE_PER_CORE = 2


def build_session(
    master: str | None = None,
    conf: Mapping[str, str] | None = None,
    app_name: str = "group-broker-pipeline",
) -> SparkSession:
    """The active session if one exists (tests share one), else a new one; the ``kafkalog`` source registered."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    active = SparkSession.getActiveSession()
    if active is not None:
        _register(active)
        return active
    check_java()
    spark_conf = SparkConf()  # picks up spark.* system properties set by spark-submit
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    elif not spark_conf.contains("spark.master"):
        builder = builder.master(DEFAULT_MASTER)
    defaults = {
        "spark.ui.showConsoleProgress": "false",
        "spark.ui.enabled": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.adaptive.enabled": "true",
        "spark.python.worker.reuse": "true",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    }
    for key, value in {**defaults, **(conf or {})}.items():
        if key not in defaults or not spark_conf.contains(key):
            builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    if SHUFFLE_PARTITIONS not in (conf or {}) and not spark_conf.contains(SHUFFLE_PARTITIONS):
        follow_parallelism(session)
    _register(session)
    return session


class _Conf(Protocol):
    def set(self, key: str, value: str) -> None: ...


class _Context(Protocol):
    @property
    def defaultParallelism(self) -> int: ...


class _Session(Protocol):
    @property
    def conf(self) -> _Conf: ...

    @property
    def sparkContext(self) -> _Context: ...


def follow_parallelism(session: _Session) -> int:
    """Shuffle into twice the session's default parallelism (its executors' cores: the cluster's, not the
    driver's; on `local[N]` N), so that a shuffle keeps every core busy on any master. Returns the count set."""
    partitions = SHUFFLE_PER_CORE * max(1, session.sparkContext.defaultParallelism)
    session.conf.set(SHUFFLE_PARTITIONS, str(partitions))
    return partitions


def _register(session: SparkSession) -> None:
    session.dataSource.register(KafkaLogDataSource)
