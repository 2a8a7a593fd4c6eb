"""Fetch record sets that stay in the segment files until they are written to the socket.

A Fetch may return up to `fetch.max.bytes` (55 MB by default) and several may run at once; building each answer in
memory (read, join, encode, frame: several copies) made eight fetches of a large partition cost over a gigabyte
and stall the event loop while copying. Instead the handler answers with `RecordSlices` (byte ranges of segment
files, each through a descriptor of its own taken under the log's lock), the codec leaves them out of the encoded
frame (`protocol.api.encode_response_parts`), and the connection streams them in chunks between the encoded
parts, waiting for the socket to drain after each: per connection, at most about one chunk is in memory.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from typing import Any

from storage.partition_log import SegmentSlice

CHUNK_BYTES = 1 << 20
INLINE_READ_BYTES = 256 * 1024  # smaller reads come from the page cache in microseconds: no thread hop


class RecordsShrankError(Exception):
    """A segment file ended before a range promised in a response header: the response cannot be completed."""


class RecordSlices:
    """A partition's record bytes in a Fetch response, as ranges of segment files (closed once written)."""

    def __init__(self, slices: Sequence[SegmentSlice]) -> None:
        self._slices = list(slices)
        self._length = sum(s.length for s in self._slices)

    def __len__(self) -> int:
        return self._length

    def __bytes__(self) -> bytes:
        """The bytes themselves (tests, and whoever needs a small record set in memory)."""
        return b"".join(_pread(s.fd, s.length, s.position) for s in self._slices)

    async def write_to(self, writer: asyncio.StreamWriter, on_progress: Callable[[], None]) -> None:
        """Stream every range to `writer` in chunks, draining after each (backpressure: a slow reader holds the
        connection's task here, not megabytes in the transport buffer). Large reads go to a worker thread so a
        cold disk never stalls the event loop."""
        for piece in self._slices:
            position, left = piece.position, piece.length
            while left and not writer.is_closing():  # closed meanwhile (idle expiry, shutdown): stop reading
                size = min(CHUNK_BYTES, left)
                if size <= INLINE_READ_BYTES:
                    chunk = _pread(piece.fd, size, position)
                else:
                    chunk = await asyncio.to_thread(_pread, piece.fd, size, position)
                writer.write(chunk)
                on_progress()
                await writer.drain()
                position += size
                left -= size

    def close(self) -> None:
        for piece in self._slices:
            piece.close()
        self._slices = []

    def __del__(self) -> None:  # a safety net only: whoever holds a response closes it (a leak would cost fds)
        self.close()


def close_record_slices(response: Any) -> None:
    """Release the descriptors of a Fetch response that will not be sent (it was read only to be measured)."""
    for topic in response.responses:
        for partition in topic.partitions:
            if isinstance(partition.records, RecordSlices):
                partition.records.close()


def _pread(fd: int, size: int, position: int) -> bytes:
    data = os.pread(fd, size, position)
    while len(data) < size:
        more = os.pread(fd, size - len(data), position + len(data))
        if not more:
            raise RecordsShrankError(f"segment ended {size - len(data)} bytes early at position {position}")
        data += more
    return data
