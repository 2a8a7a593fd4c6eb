"""As-of joins on the log-end-offset step function, which the DataFrame API has no native operator for.

LEO(t) for a topic partition is the end offset of the last batch whose (running max) timestamp is <= t. Query rows
are unioned with the LEO change rows and a running ``last(..., ignorenulls)`` over ``(topic, partition)`` ordered by
time carries the latest LEO forward. Change rows sort before query rows at equal times (a batch stamped exactly t
counts as written by t: rule 4 of :mod:`pipeline.describe_rules`), and by LEO among themselves, so the result is
deterministic. One sort per topic partition, no range join, no driver loop.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

__all__ = ["with_leo"]


def with_leo(queries: DataFrame, leo: DataFrame, time_col: str, out_col: str = "leo") -> DataFrame:
    """``queries`` (with ``topic``, ``partition`` and ``time_col``) plus ``out_col`` = LEO as of that time.

    ``leo`` has ``topic, partition, ts_ms, leo`` (see :func:`pipeline.extract.topic_leo`); partitions it does not
    know get null.
    """
    q = queries.withColumns({"_asof_t": F.col(time_col).cast("long"), "_asof_kind": F.lit(1), out_col: F.lit(None)})
    changes = leo.select(
        "topic",
        "partition",
        F.col("ts_ms").alias("_asof_t"),
        F.lit(0).alias("_asof_kind"),
        F.col("leo").alias("_asof_leo"),
    )
    merged = q.withColumn(out_col, F.col(out_col).cast("long")).unionByName(changes, allowMissingColumns=True)
    w = (
        Window.partitionBy("topic", "partition")
        .orderBy("_asof_t", "_asof_kind", "_asof_leo")
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    return (
        merged.withColumn(out_col, F.last("_asof_leo", ignorenulls=True).over(w))
        .where(F.col("_asof_kind") == 1)
        .drop("_asof_t", "_asof_kind", "_asof_leo")
    )
