"""Burrow's partition rules (:mod:`pipeline.rules`) as Spark SQL, evaluated natively in the JVM.

Input columns: ``win`` (``array<struct<offset:long,ts:long,lag:long>>``, oldest first, no empty slots),
``brokers`` (``array<long>``, the recent broker offsets), ``cur`` (current lag, >= 0) and ``now_ms``. Every rule is
also kept as its own column so a report can say why a partition got its status. Higher-order functions keep the
evaluation per row with no Python worker; ``size(win) < 2`` is guarded because ``sequence(1, 0)`` counts down.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

__all__ = ["STATUS_RANK", "status_rank", "with_status"]

#: Burrow's StatusConstant values, for max() roll-ups.
STATUS_RANK = {"NOTFOUND": 0, "OK": 1, "WARN": 2, "ERR": 3, "STOP": 4, "STALL": 5, "REWIND": 6}

_LAST = "element_at(win, -1)"


def status_rank(status: Column) -> Column:
    """A status name's :data:`STATUS_RANK` as a column (the severity the group roll-up takes the max of)."""
    return F.create_map(*[x for k, v in STATUS_RANK.items() for x in (F.lit(k), F.lit(v))])[status]


def _flags(allowed_lag: int) -> dict[str, Column]:
    return {
        "f_current_lag_ok": F.expr(f"cur <= {allowed_lag}"),
        "f_stopped": F.expr(f"(now_ms - {_LAST}.ts) > ({_LAST}.ts - win[0].ts)"),
        "f_recent_lag_zero": F.expr(f"exists(brokers, b -> b <= {_LAST}.offset)"),
        "rewind_index": F.expr(
            "CASE WHEN size(win) < 2 THEN -1 ELSE coalesce(array_position("
            "transform(sequence(1, size(win) - 1), i -> win[i].offset < win[i - 1].offset), true), 0) END"
        ),
        "f_lag_always_nonzero": F.expr(f"NOT exists(win, x -> x.lag IS NOT NULL AND x.lag <= {allowed_lag})"),
        "f_stalled": F.expr(
            "size(win) < 2 OR forall(sequence(1, size(win) - 1), i -> win[i].offset = win[i - 1].offset)"
        ),
        "f_lag_not_decreasing": F.expr(
            "size(filter(win, x -> x.lag IS NOT NULL)) < 2 OR forall("
            "sequence(1, size(filter(win, x -> x.lag IS NOT NULL)) - 1), "
            "i -> filter(win, x -> x.lag IS NOT NULL)[i].lag >= filter(win, x -> x.lag IS NOT NULL)[i - 1].lag)"
        ),
    }


def with_status(df: DataFrame, *, allowed_lag: int, minimum_complete: float, intervals: int) -> DataFrame:
    """Add ``complete``, the rule flags, ``status`` (OK/WARN/STOP/STALL/REWIND) and ``rule`` (which one decided)."""
    out = df.withColumns(_flags(allowed_lag))
    out = out.withColumns(
        {
            "complete": F.size("win").cast("double") / F.lit(float(intervals)),
            "f_rewind_recovered": F.expr(
                "rewind_index > 0 AND exists(slice(win, rewind_index + 1, size(win) - rewind_index), "
                "x -> x.offset >= win[rewind_index - 1].offset)"
            ),
        }
    )
    decided = (
        F.when(F.size("win") == 0, F.array(F.lit("OK"), F.lit("empty")))
        .when(F.col("complete") < F.lit(float(minimum_complete)), F.array(F.lit("OK"), F.lit("incomplete")))
        .when(F.col("f_current_lag_ok"), F.array(F.lit("OK"), F.lit("current-lag")))
        .when(F.col("f_stopped") & ~F.col("f_recent_lag_zero"), F.array(F.lit("STOP"), F.lit("stop")))
        .when((F.col("rewind_index") > 0) & ~F.col("f_rewind_recovered"), F.array(F.lit("REWIND"), F.lit("rewind")))
        .when(~F.col("f_lag_always_nonzero"), F.array(F.lit("OK"), F.lit("zero-lag")))
        .when(F.col("f_stalled"), F.array(F.lit("STALL"), F.lit("stall")))
        .when(F.col("f_lag_not_decreasing"), F.array(F.lit("WARN"), F.lit("warn")))
        .otherwise(F.array(F.lit("OK"), F.lit("ok")))
    )
    return (
        out.withColumn("_decided", decided)
        .withColumns({"status": F.col("_decided")[0], "rule": F.col("_decided")[1]})
        .drop("_decided")
    )
