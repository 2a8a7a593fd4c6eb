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

    Varints of up to three bytes are decoded (lengths up to 1 MiB); a longer one, or any field out of bounds,
    gives None. Every record consumes at least one byte, so a hostile count ends the loop at
    ``end``.
    """
    if count <= 0 or end > len(data):
        return None
    try:
        return _walk(data, pos, end, count)
    except IndexError:  # a field read past the buffer: the full parser reports it
        return None


def _raw(data: ReadableBuffer, pos: int) -> tuple[int, int]:
    """The raw (zigzag-encoded) value of the varint at ``pos`` and the position after it, for the forms of up to
    three bytes (lengths up to 1 MiB, offset deltas up to 2^20); -1 for a longer one, left to the full parser."""
    b = data[pos]
    if b < 0x80:
        return b, pos + 1
    c = data[pos + 1]
    if c < 0x80:
        return (b & 0x7F) | (c << 7), pos + 2
    d = data[pos + 2]
    if d < 0x80:
        return (b & 0x7F) | ((c & 0x7F) << 7) | (d << 14), pos + 3
    return -1, pos


def _walk(data: ReadableBuffer, pos: int, end: int, count: int) -> RecordsSummary | None:
    """`scan_records`' loop. Fields are read without bounds checks against the record's end: a field that runs
    past it leaves `pos` beyond the end, which the final comparison refuses, as the full parser does. Raw varints
    are even (zigzag of a value >= 0) or 1 (zigzag of -1, a null key or value) where a length is expected.
    One-byte varints (most fields) are read inline: a call for each would cost a third of the walk."""
    lo, hi = _ABOVE_ANY, -_ABOVE_ANY
    keyed = True
    for index in range(count):
        if pos >= end:
            return None
        raw, pos = _raw(data, pos)
        record_end = pos + (raw >> 1)
        if raw <= 0 or raw & 1 or record_end > end:
            return None
        raw = data[pos + 1]  # after the attributes byte: timestampDelta
        if raw < 0x80:
            pos += 2
        else:
            raw, pos = _raw(data, pos + 1)
            if raw < 0:
                return None
        delta = (raw >> 1) ^ -(raw & 1)
        if delta < lo:
            lo = delta
        if delta > hi:
            hi = delta
        raw = data[pos]  # offsetDelta: must equal the index
        if raw < 0x80:
            pos += 1
        else:
            raw, pos = _raw(data, pos)
        if raw != index << 1:
            return None
        raw = data[pos]  # key
        if raw < 0x80:
            pos += 1
        else:
            raw, pos = _raw(data, pos)
        if raw == 1:
            keyed = False
        elif raw < 0 or raw & 1 or (raw >> 1) > record_end - pos:
            return None
        else:
            pos += raw >> 1
        raw, pos = _raw(data, pos)  # value
        if raw != 1:
            if raw < 0 or raw & 1 or (raw >> 1) > record_end - pos:
                return None
            pos += raw >> 1
        raw = data[pos]  # headers count, then (key length, key, value length, value) each
        if raw & 1 or raw >= 0x80:  # a negative count, or more than 63 headers: the full parser decides
            return None
        pos += 1
        for turn in range(raw):  # raw = 2 * count: key and value of each
            size, pos = _raw(data, pos)
            # a header key is never null (the full parser refuses a negative key length); a value may be
            if size == 1 and turn & 1:
                continue
            if size < 0 or size & 1 or (size >> 1) > record_end - pos:
                return None
            pos += size >> 1
        if pos != record_end:
            return None
    if pos != end:
        return None
    return RecordsSummary(lo, hi, keyed)
