"""Streaming a Fetch's record sets from the segment files: every byte arrives in order even when the transport keeps
references to what it has not sent (as uvloop does), a buffer is never read into while the transport still holds
it, and a file shorter than promised is `RecordsShrankError`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from broker.record_slices import CHUNK_BYTES, RecordSlices, RecordsShrankError
from storage.partition_log import SegmentSlice


class HoldingTransport:
    """Keeps the views it is given, unsent, until `send` (uvloop queues without copying what the socket refuses)."""

    def __init__(self) -> None:
        self.queued: list[memoryview] = []
        self.sent = bytearray()
        self.writes = 0

    def write(self, data: Any) -> None:
        self.writes += 1
        self.queued.append(memoryview(data))

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return sum(len(v) for v in self.queued)

    def send(self, keep: int = 0) -> None:
        """Send all but the last `keep` queued writes (their bytes as they are now)."""
        while len(self.queued) > keep:
            self.sent += self.queued.pop(0)


def slices_of(path: Path, *ranges: tuple[int, int]) -> RecordSlices:
    return RecordSlices([SegmentSlice(os.open(path, os.O_RDONLY), start, length) for start, length in ranges])


@pytest.fixture
def segment(tmp_path: Path) -> tuple[Path, bytes]:
    data = os.urandom(3 * CHUNK_BYTES + 12345)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    return path, data


async def test_every_byte_arrives_in_order_when_the_transport_sends_as_it_goes(segment: tuple[Path, bytes]) -> None:
    path, data = segment
    transport = HoldingTransport()

    async def writable() -> None:
        transport.send(keep=1)  # the socket always lags one write behind

    records = slices_of(path, (100, len(data) - 200), (0, 50))
    await records.write_to(transport, writable, lambda: None)
    transport.send()
    records.close()
    assert bytes(transport.sent) == data[100:-100] + data[:50]
    assert transport.writes == 5


async def test_a_buffer_the_transport_still_holds_is_not_read_into_again(segment: tuple[Path, bytes]) -> None:
    path, data = segment
    transport = HoldingTransport()

    async def writable() -> None:  # nothing is ever sent while streaming
        pass

    records = slices_of(path, (0, len(data)))
    await records.write_to(transport, writable, lambda: None)
    transport.send()
    records.close()
    assert bytes(transport.sent) == data


def test_small_record_sets_read_whole(segment: tuple[Path, bytes]) -> None:
    path, data = segment
    records = slices_of(path, (10, 20), (40, 5))
    assert bytes(records) == data[10:30] + data[40:45]
    records.close()


async def test_a_segment_shorter_than_promised_is_records_shrank(segment: tuple[Path, bytes]) -> None:
    path, data = segment
    records = slices_of(path, (len(data) - 10, 20))
    with pytest.raises(RecordsShrankError):
        bytes(records)

    async def writable() -> None:
        pass

    with pytest.raises(RecordsShrankError):
        await records.write_to(HoldingTransport(), writable, lambda: None)
    records.close()
