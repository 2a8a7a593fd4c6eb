"""`FrameBuffer` hands out each frame's bytes exactly, whether it copies a small frame by slicing or a large one
through a memoryview, and whatever the reads' boundaries."""

from __future__ import annotations

import struct

import pytest

from protocol.frame import _SLICE_COPY_BYTES, FrameBuffer, FrameError


def framed(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def test_frames_on_both_sides_of_the_copy_threshold_come_out_whole_and_in_order() -> None:
    payloads = [bytes([n % 251]) * size for n, size in enumerate((0, 1, 70, _SLICE_COPY_BYTES, _SLICE_COPY_BYTES + 1))]
    stream = b"".join(framed(p) for p in payloads)
    frames = FrameBuffer(1 << 20)
    out = []
    for start in range(0, len(stream), 997):  # reads that cut frames and size prefixes anywhere
        frames.feed(stream[start : start + 997])
        while (frame := frames.next_frame()) is not None:
            assert type(frame) is bytes
            out.append(frame)
    assert out == payloads
    assert frames.pending_bytes == 0


def test_a_frame_over_the_limit_is_refused_from_its_size_alone() -> None:
    frames = FrameBuffer(100)
    frames.feed(framed(b"x" * 10))
    with pytest.raises(FrameError, match="exceeds"):
        frames.feed(struct.pack(">i", 101))
        frames.next_frame()
