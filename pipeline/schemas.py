"""Schemas of the raw rows the data source produces, once for Spark and once for Arrow.

Both must agree exactly: Spark checks the Arrow batches a Python data source yields against the declared schema,
and an ``int64`` column where Spark expects ``int`` fails at run time. Keeping the two side by side, built from one
list, is what keeps them in step.
"""

from __future__ import annotations

import pyarrow as pa  # type: ignore[import-untyped]
from pyspark.sql import types as T

from pipeline.decode import OFFSETS_COLUMNS, SKIP_COLUMNS, TOPIC_BATCH_COLUMNS

__all__ = [
    "OFFSETS_ARROW",
    "OFFSETS_SPARK",
    "TOPIC_BATCHES_ARROW",
    "TOPIC_BATCHES_SPARK",
    "arrow_schema",
    "spark_schema",
]

_ASSIGNMENT_SPARK = T.ArrayType(
    T.StructType([T.StructField("topic", T.StringType()), T.StructField("partitions", T.ArrayType(T.IntegerType()))])
)
_MEMBER_SPARK = T.StructType(
    [
        T.StructField("member_id", T.StringType()),
        T.StructField("group_instance_id", T.StringType()),
        T.StructField("client_id", T.StringType()),
        T.StructField("client_host", T.StringType()),
        T.StructField("session_timeout_ms", T.IntegerType()),
        T.StructField("rebalance_timeout_ms", T.IntegerType()),
        T.StructField("subscribed_topics", T.ArrayType(T.StringType())),
        T.StructField("assignment", _ASSIGNMENT_SPARK),
    ]
)
_ASSIGNMENT_ARROW = pa.list_(pa.struct([("topic", pa.string()), ("partitions", pa.list_(pa.int32()))]))
_MEMBER_ARROW = pa.struct(
    [
        ("member_id", pa.string()),
        ("group_instance_id", pa.string()),
        ("client_id", pa.string()),
        ("client_host", pa.string()),
        ("session_timeout_ms", pa.int32()),
        ("rebalance_timeout_ms", pa.int32()),
        ("subscribed_topics", pa.list_(pa.string())),
        ("assignment", _ASSIGNMENT_ARROW),
    ]
)

_S, _I, _L, _B = "string", "int", "long", "bool"
_TYPES: dict[str, tuple[T.DataType, pa.DataType]] = {
    _S: (T.StringType(), pa.string()),
    _I: (T.IntegerType(), pa.int32()),
    _L: (T.LongType(), pa.int64()),
    _B: (T.BooleanType(), pa.bool_()),
    "members": (T.ArrayType(_MEMBER_SPARK), pa.list_(_MEMBER_ARROW)),
}

_OFFSETS_TYPES = {
    "log_partition": _I,
    "segment_base": _L,
    "log_offset": _L,
    "log_ts_ms": _L,
    "record_type": _S,
    "group": _S,
    "topic": _S,
    "partition": _I,
    "committed_offset": _L,
    "leader_epoch": _I,
    "metadata": _S,
    "commit_ts_ms": _L,
    "expire_ts_ms": _L,
    "generation": _I,
    "protocol_type": _S,
    "protocol": _S,
    "leader": _S,
    "state_ts_ms": _L,
    "members": "members",
    "error": _S,
}
#: The skipped-range columns both tables end with (:data:`pipeline.decode.SKIP_COLUMNS`).
_SKIP_TYPES = {
    "skip_kind": _S,
    "skip_start": _L,
    "skip_end": _L,
    "skip_batches": _I,
    "skip_records": _I,
    "skip_offsets_from": _L,
    "skip_offsets_to": _L,
    "skip_detail": _S,
}
_OFFSETS_TYPES |= _SKIP_TYPES
_OFFSETS_TYPES |= {"producer_id": _L, "batch_offset": _L}
_TOPIC_TYPES = {
    "topic": _S,
    "partition": _I,
    "segment_base": _L,
    "base_offset": _L,
    "last_offset": _L,
    "record_count": _I,
    "first_ts_ms": _L,
    "max_ts_ms": _L,
    "log_append_time": _B,
    "is_transactional": _B,
    "is_control": _B,
    **_SKIP_TYPES,
}
assert tuple(_SKIP_TYPES) == SKIP_COLUMNS
assert tuple(_OFFSETS_TYPES) == OFFSETS_COLUMNS and tuple(_TOPIC_TYPES) == TOPIC_BATCH_COLUMNS


def spark_schema(types: dict[str, str]) -> T.StructType:
    return T.StructType([T.StructField(name, _TYPES[kind][0]) for name, kind in types.items()])


def arrow_schema(types: dict[str, str]) -> pa.Schema:
    return pa.schema([(name, _TYPES[kind][1]) for name, kind in types.items()])


OFFSETS_SPARK = spark_schema(_OFFSETS_TYPES)
OFFSETS_ARROW = arrow_schema(_OFFSETS_TYPES)
TOPIC_BATCHES_SPARK = spark_schema(_TOPIC_TYPES)
TOPIC_BATCHES_ARROW = arrow_schema(_TOPIC_TYPES)
