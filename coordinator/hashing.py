"""Group-to-partition mapping, bit for bit as Kafka computes it (rule #1).

The coordinator of group G is the leader of `__consumer_offsets` partition
`Utils.abs(G.hashCode()) % offsets.topic.num.partitions`. Two Java details matter and both are easy to get wrong
in Python: `String.hashCode` runs over UTF-16 code units (so a character outside the BMP contributes its two
surrogates), with 32-bit signed overflow; and Kafka's `Utils.abs` maps `Integer.MIN_VALUE` to 0 instead of
overflowing. A broker that disagrees with Kafka here sends clients to the wrong coordinator for some group ids.
"""

from __future__ import annotations

import sys
from functools import lru_cache

_INT_MIN = -(2**31)
_MASK = 0xFFFFFFFF
_UTF16_NATIVE = "utf-16-le" if sys.byteorder == "little" else "utf-16-be"


def java_string_hash(value: str) -> int:
    """`java.lang.String.hashCode()`: h = 31*h + c over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    if value.isascii():
        for ch in value.encode("ascii"):
            h = (31 * h + ch) & _MASK
    else:
        units = memoryview(value.encode(_UTF16_NATIVE, "surrogatepass")).cast("H")
        for unit in units:
            h = (31 * h + unit) & _MASK
    return h - (1 << 32) if h & 0x80000000 else h


def kafka_abs(n: int) -> int:
    """`org.apache.kafka.common.utils.Utils.abs`: like `Math.abs`, except `Integer.MIN_VALUE` gives 0."""
    return 0 if n == _INT_MIN else abs(n)


#: Group and transactional ids whose partition is remembered: every JoinGroup, SyncGroup and OffsetCommit asks for
#: its group's, and the hash walks the id character by character in Python.
PARTITION_CACHE_SIZE = 16_384


@lru_cache(maxsize=PARTITION_CACHE_SIZE)
def partition_for(group_id: str, num_partitions: int) -> int:
    """The `__consumer_offsets` partition that stores (and whose leader coordinates) `group_id` (remembered for the
    most recent ids: it is asked on every group request)."""
    if num_partitions <= 0:
        raise ValueError(f"offsets.topic.num.partitions must be positive, got {num_partitions}")
    return kafka_abs(java_string_hash(group_id)) % num_partitions
