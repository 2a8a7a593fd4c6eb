"""A walk over the records of a v2 batch that builds no objects: the produce path's fast check.

Kafka's ``LogValidator`` iterates every record of a produced batch (``DefaultRecord.readFrom`` checks each
record's framing, then the key rule of compacted topics and the timestamp window apply per record). Parsing
every record into a :class:`~protocol.records.Record` costs microseconds per record in Python; this walk checks
the same framing with integer arithmetic only and summarises what the rules need: the smallest and largest
timestamp delta, whether every offset delta equals the record's index, whether every record has a key.

It never raises on bad bytes: anything it does not accept (a framing fault, an offset delta out of order, a
varint longer than the common forms) returns None, and the caller then runs the full parser, which produces
Kafka's exact error. So the walk may be conservative but never lenient: whatever it accepts, the full parser
accepts with the same results.
"""

from __future__ import annotations

from typing import NamedTuple

from protocol.varint import ReadableBuffer

__all__ = ["RecordsSummary", "scan_records"]

_ABOVE_ANY = 1 << 64  # beyond any varlong: the first record's delta replaces it


class RecordsSummary(NamedTuple):
    """What the per-record rules need of a batch whose records all parse with offset delta == index."""

    min_timestamp_delta: int
    max_timestamp_delta: int
    #: False when some record has a null key (compacted topics refuse it).
    all_keyed: bool


def scan_records(data: ReadableBuffer, pos: int, end: int, count: int) -> RecordsSummary | None:
    """Walk exactly ``count`` records filling exactly ``[pos, end)`` of ``data``; None if anything is unusual.

    Varints of one or two bytes are decoded inline (lengths up to 8 KiB, small deltas); a longer one, or any
    field out of bounds, gives None. Every record consumes at least one byte, so a hostile count ends the loop at
    ``end``.
    """
    if count <= 0 or end > len(data):
        return None
    try:
        return _walk(data, pos, end, count)
    except IndexError:  # a field read past the buffer: the full parser reports it
        return None


def _walk(data: ReadableBuffer, pos: int, end: int, count: int) -> RecordsSummary | None:
    """`scan_records`' loop. Fields are read without bounds checks against the record's end: a field that runs
    past it leaves `pos` beyond the end, which the final comparison refuses, as the full parser does."""
    lo, hi = _ABOVE_ANY, -_ABOVE_ANY
    keyed = True
    for index in range(count):
        # length (zigzag varint), then the record body up to record_end
        if pos >= end:
            return None
        b = data[pos]
        if b < 0x80:
            pos += 1
        else:
            if (c := data[pos + 1]) >= 0x80:
                return None
            b = (b & 0x7F) | (c << 7)
            pos += 2
        length = (b >> 1) ^ -(b & 1)
        record_end = pos + length
        if length <= 0 or record_end > end:
            return None
        pos += 1  # attributes
        # timestampDelta (varlong): one or two bytes
        b = data[pos]
        if b < 0x80:
            pos += 1
        else:
            if (c := data[pos + 1]) >= 0x80:
                return None
            b = (b & 0x7F) | (c << 7)
            pos += 2
        delta = (b >> 1) ^ -(b & 1)
        if delta < lo:
            lo = delta
        if delta > hi:
            hi = delta
        # offsetDelta: must equal the index
        b = data[pos]
        if b < 0x80:
            pos += 1
        else:
            if (c := data[pos + 1]) >= 0x80:
                return None
            b = (b & 0x7F) | (c << 7)
            pos += 2
        if (b >> 1) ^ -(b & 1) != index:
            return None
        # key: -1 (null) or a length within the record
        b = data[pos]
        if b < 0x80:
            pos += 1
        else:
            if (c := data[pos + 1]) >= 0x80:
                return None
            b = (b & 0x7F) | (c << 7)
            pos += 2
        if b == 1:  # zigzag(-1): null
            keyed = False
        elif b & 1 or (b >> 1) > record_end - pos:
            return None
        else:
            pos += b >> 1
        # value: the same
        b = data[pos]
        if b < 0x80:
            pos += 1
        else:
            if (c := data[pos + 1]) >= 0x80:
                return None
            b = (b & 0x7F) | (c << 7)
            pos += 2
        if b != 1:
            if b & 1 or (b >> 1) > record_end - pos:
                return None
            pos += b >> 1
        # headers: count, then (key length, key, value length, value) each
        b = data[pos]
        if b >= 0x80:
            return None
        pos += 1
        headers = (b >> 1) ^ -(b & 1)
        if headers < 0:
            return None
        for turn in range(headers * 2):
            b = data[pos]
            if b < 0x80:
                pos += 1
            else:
                if (c := data[pos + 1]) >= 0x80:
                    return None
                b = (b & 0x7F) | (c << 7)
                pos += 2
            size = (b >> 1) ^ -(b & 1)
            # a header key is never null (the full parser refuses a negative key length); a value may be
            if size < (0 if turn % 2 == 0 else -1) or size > record_end - pos:
                return None
            if size > 0:
                pos += size
        if pos != record_end:
            return None
    if pos != end:
        return None
    return RecordsSummary(lo, hi, keyed)
