"""Finding the next batch that validates after damaged bytes, for log recovery and for offline readers.

A damaged byte range (a flipped bit, a bad length, garbage) has no trustworthy length to hop over, so the only way
on is to look for the next position where a whole batch validates: a header that parses (magic 2, sane length),
that the caller's own rules accept (offsets after the last good batch), that lies wholly before the limit, and
whose CRC32C matches. Candidates are found by the magic byte with ``bytes.find``, so damaged bytes are searched at
C speed. Storage recovery (:mod:`storage.segment`) and the analytics pipeline (:mod:`pipeline.framing`) share this.
"""

from __future__ import annotations

from collections.abc import Callable

from protocol.errors import DecodeError
from protocol.records import BATCH_HEADER_SIZE, BatchHeader, peek_batch_header, verify_batch_crc

__all__ = ["RESYNC_CHUNK", "Read", "next_valid_batch"]

#: Read size when looking for the next valid batch after damaged bytes.
RESYNC_CHUNK = 1024 * 1024
_MAGIC_AT = 16
_MAGIC_BYTE = b"\x02"

Read = Callable[[int, int], bytes]
"""``read(position, length)``: the bytes of the file from ``position`` (fewer only at its end)."""


def next_valid_batch(
    read: Read,
    start: int,
    end: int,
    accept: Callable[[int, BatchHeader], bool] = lambda position, header: True,
    chunk_size: int = RESYNC_CHUNK,
) -> tuple[int, BatchHeader] | None:
    """Position and header of the first valid batch starting in ``[start, end)`` and ending by ``end``, or None.

    ``accept(position, header)`` adds the caller's rules (it sees only headers that parse); the CRC is checked
    last, on the candidates it accepts.
    """
    chunk_start = start
    while chunk_start + BATCH_HEADER_SIZE <= end:
        chunk = read(chunk_start, min(chunk_size, end - chunk_start))
        last = len(chunk) - BATCH_HEADER_SIZE  # last candidate whose header lies wholly in this chunk
        if last < 0:
            return None
        found = chunk.find(_MAGIC_BYTE, _MAGIC_AT)
        while found >= 0 and found - _MAGIC_AT <= last:
            rel = found - _MAGIC_AT
            header = _valid_header(chunk, rel, chunk_start + rel, end, accept)
            if header is not None and _crc_matches(read, chunk_start + rel, header):
                return chunk_start + rel, header
            found = chunk.find(_MAGIC_BYTE, found + 1)
        chunk_start += last + 1
    return None


def _valid_header(
    chunk: bytes, rel: int, position: int, end: int, accept: Callable[[int, BatchHeader], bool]
) -> BatchHeader | None:
    try:
        header = peek_batch_header(chunk, rel)
    except DecodeError:
        return None
    if header.last_offset_delta < 0 or position + header.size > end or not accept(position, header):
        return None
    return header


def _crc_matches(read: Read, position: int, header: BatchHeader) -> bool:
    try:
        verify_batch_crc(read(position, header.size), 0, header)
    except DecodeError:
        return False
    return True
