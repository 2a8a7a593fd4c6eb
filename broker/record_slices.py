"""Fetch record sets that stay in the segment files until they are written to the socket.

A Fetch may return up to `fetch.max.bytes` (55 MB by default) and several may run at once; building each answer in
memory (read, join, encode, frame: several copies) made eight fetches of a large partition cost over a gigabyte
and stall the event loop while copying. Instead the handler answers with `RecordSlices` (byte ranges of segment
files, each through a descriptor of its own taken under the log's lock), the codec leaves them out of the encoded
frame (`protocol.api.encode_response_parts`), and the connection streams them between the encoded parts.

Streaming reads each chunk with `os.preadv` straight into one of two buffers that live as long as the response,
and hands the transport a view of it: no `bytes` object per chunk, no allocation (and page faults) per megabyte.
A buffer is read into again only once the transport has sent every byte of it: its unsent bytes are always the
last ones written, so once they number no more than what was written after the buffer, the buffer is free. The
transport may keep a reference to what it has not sent (uvloop does, without copying), which is why that check is
needed; if it does not hold, a fresh buffer is taken instead. Writing pauses while the transport asks it to
(`pause_writing`), so a slow reader holds the response here, not megabytes in the transport.

Not done (checked): uvloop's transports have no `loop.sendfile`, and a memoryview over an mmap of the segment would
turn a segment truncated meanwhile (`truncate_to`) into a SIGBUS that kills the broker, where a short `pread` is a
`RecordsShrankError` that closes one connection.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from storage.partition_log import SegmentSlice

CHUNK_BYTES = 1 << 20
INLINE_READ_BYTES = 256 * 1024  # smaller reads come from the page cache in microseconds: no thread hop


class RecordsShrankError(Exception):
    """A segment file ended before a range promised in a response header: the response cannot be completed."""


class Transport(Protocol):
    """What streaming needs of an asyncio (or uvloop) write transport."""

    def write(self, data: Any) -> None: ...

    def is_closing(self) -> bool: ...

    def get_write_buffer_size(self) -> int: ...


class RecordSlices:
    """A partition's record bytes in a Fetch response, as ranges of segment files (closed once written)."""

    def __init__(self, slices: Sequence[SegmentSlice]) -> None:
        self._slices = list(slices)
        self._length = sum(s.length for s in self._slices)

    def __len__(self) -> int:
        return self._length

    def __bytes__(self) -> bytes:
        """The bytes themselves (tests, and whoever needs a small record set in memory)."""
        return bytes(self.read())

    def read(self) -> bytearray:
        """The bytes in one buffer (a small record set, written with the rest of a batch of answers)."""
        buffer = bytearray(self._length)
        view = memoryview(buffer)
        done = 0
        for piece in self._slices:
            _read_into(piece.fd, view[done : done + piece.length], piece.position)
            done += piece.length
        return buffer

    async def write_to(
        self, transport: Transport, writable: Callable[[], Awaitable[None]], on_progress: Callable[[], None]
    ) -> None:
        """Stream every range to `transport` in chunks, waiting for `writable()` before each (the transport is not
        paused). Large reads go to a worker thread so a cold disk never stalls the event loop."""
        buffers = _Buffers(min(CHUNK_BYTES, self._length))
        for piece in self._slices:
            position, left = piece.position, piece.length
            while left:
                await writable()
                if transport.is_closing():  # closed meanwhile (idle expiry, shutdown): stop reading
                    return
                size = min(CHUNK_BYTES, left)
                view = buffers.take(size, transport.get_write_buffer_size())
                if size <= INLINE_READ_BYTES:
                    _read_into(piece.fd, view, position)
                else:
                    await asyncio.to_thread(_read_into, piece.fd, view, position)
                transport.write(view)
                buffers.written(size)
                on_progress()
                position += size
                left -= size

    def close(self) -> None:
        for piece in self._slices:
            piece.close()
        self._slices = []

    def __del__(self) -> None:  # a safety net only: whoever holds a response closes it (a leak would cost fds)
        self.close()


class _Buffers:
    """Two chunk buffers used in turn, each reused only once the transport has sent all of it."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._views: list[memoryview | None] = [None, None]
        self._written_at = [0, 0]  # the stream's byte count right after each buffer was last written
        self._written = 0
        self._next = 0

    def take(self, size: int, unsent: int) -> memoryview:
        """A view of `size` bytes to read into; `unsent` is the transport's write buffer size now."""
        index = self._next
        self._next ^= 1
        view = self._views[index]
        if view is None or unsent > self._written - self._written_at[index]:  # first use, or still being sent
            view = self._views[index] = memoryview(bytearray(self._size))
        self._written_at[index] = -1  # set by `written`
        self._current = index
        return view[:size]

    def written(self, size: int) -> None:
        self._written += size
        self._written_at[self._current] = self._written


def close_record_slices(response: Any) -> None:
    """Release the descriptors of a Fetch response that will not be sent (it was read only to be measured)."""
    for topic in response.responses:
        for partition in topic.partitions:
            if isinstance(partition.records, RecordSlices):
                partition.records.close()


def _read_into(fd: int, view: memoryview, position: int) -> None:
    """Fill `view` from `fd` at `position` (a short read continues; the end of the file is RecordsShrankError)."""
    done = 0
    while done < len(view):
        got = os.preadv(fd, [view[done:]], position + done)
        if not got:
            raise RecordsShrankError(f"segment ended {len(view) - done} bytes early at position {position}")
        done += got
