"""Kafka's variable-length integers.

Kafka uses two families: unsigned LEB128 varints (compact strings, arrays and tagged fields of the flexible
request versions) and zigzag-signed varints/varlongs (every length and delta inside a v2 record). All of them are
bounded: a 32-bit value never needs more than 5 bytes and a 64-bit one never more than 10, so anything longer is
corrupt or hostile and is rejected instead of being accumulated into an ever larger Python int.

Readers take ``(buf, pos)`` and return ``(value, new_pos)`` so callers can walk a buffer without slicing it.
Writers come in two shapes: ``write_*`` returns fresh bytes, ``append_*`` extends a bytearray being built, which
is what an encoder assembling a whole batch wants.
"""

from __future__ import annotations

from typing import TypeAlias

from protocol.errors import DecodeError, EncodeError

__all__ = [
    "INT32_MAX",
    "INT32_MIN",
    "INT64_MAX",
    "INT64_MIN",
    "UINT32_MAX",
    "ReadableBuffer",
    "append_uvarint",
    "append_varint",
    "append_varlong",
    "read_uvarint",
    "read_varint",
    "read_varlong",
    "uvarint_size",
    "varint_size",
    "varlong_size",
    "write_uvarint",
    "write_varint",
    "write_varlong",
    "zigzag_decode",
    "zigzag_encode",
]

UINT32_MAX = 0xFFFF_FFFF
INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
_UINT64_MAX = (1 << 64) - 1

#: What the readers accept: anything indexable to ints and sliceable without copying the whole buffer.
ReadableBuffer: TypeAlias = bytes | bytearray | memoryview

# Single-byte encodings are by far the most common (small lengths, deltas, counts), so they are pre-built.
_ONE_BYTE = tuple(bytes((i,)) for i in range(0x80))


def _read_unsigned(buf: ReadableBuffer, pos: int, max_bytes: int, limit: int, path: str) -> tuple[int, int]:
    """Shared LEB128 loop: every byte is bounds-checked and the byte count is capped, so it cannot run away.

    The last permitted byte may only carry the bits that still fit below ``limit``; Java silently truncates the
    excess, but only a broken or hostile encoder produces it, so it is reported as corruption instead.
    """
    start = pos
    end = len(buf)
    if pos >= end or pos < 0:
        raise DecodeError("truncated varint", path=path, offset=start)
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    value = b & 0x7F
    pos += 1
    # Two bytes (14 bits: typical key/value lengths) is the next most common case and cannot overflow.
    if pos < end and (b := buf[pos]) < 0x80:
        return value | (b << 7), pos + 1
    shift = 7
    while True:
        if pos >= end:
            raise DecodeError("truncated varint", path=path, offset=start)
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            if value > limit:
                raise DecodeError(f"varint overflows: value exceeds {limit.bit_length()} bits", path=path, offset=start)
            return value, pos
        shift += 7
        if pos - start >= max_bytes:
            raise DecodeError(f"varint longer than {max_bytes} bytes", path=path, offset=start)


def _append_unsigned(out: bytearray, value: int) -> None:
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _unsigned_size(value: int) -> int:
    # bit_length is computed in C and makes this branch-free for every size.
    return max(1, (value.bit_length() + 6) // 7)


def zigzag_encode(value: int) -> int:
    """Map signed to unsigned so small magnitudes of either sign stay short on the wire.

    Valid for any value inside int64; callers range-check first.
    """
    return (value << 1) ^ (value >> 63)


def zigzag_decode(value: int) -> int:
    # The readers and appenders inline both zigzag expressions: a call per record field is measurable.
    return (value >> 1) ^ -(value & 1)


# --- unsigned varint (uint32) ---------------------------------------------------------------------------------


def read_uvarint(buf: ReadableBuffer, pos: int, path: str = "uvarint") -> tuple[int, int]:
    return _read_unsigned(buf, pos, 5, UINT32_MAX, path)


def append_uvarint(out: bytearray, value: int) -> None:
    if 0 <= value < 0x80:
        out.append(value)
        return
    if value < 0 or value > UINT32_MAX:
        raise EncodeError(f"unsigned varint out of range: {value}")
    _append_unsigned(out, value)


def write_uvarint(value: int) -> bytes:
    if 0 <= value < 0x80:
        return _ONE_BYTE[value]
    out = bytearray()
    append_uvarint(out, value)
    return bytes(out)


def uvarint_size(value: int) -> int:
    if value < 0 or value > UINT32_MAX:
        raise EncodeError(f"unsigned varint out of range: {value}")
    return _unsigned_size(value)


# --- signed zigzag varint (int32) -----------------------------------------------------------------------------


def read_varint(buf: ReadableBuffer, pos: int, path: str = "varint") -> tuple[int, int]:
    # Inline one-byte case: record fields are mostly tiny, and this skips a call per field.
    if 0 <= pos < len(buf) and (raw := buf[pos]) < 0x80:
        return (raw >> 1) ^ -(raw & 1), pos + 1
    raw, pos = _read_unsigned(buf, pos, 5, UINT32_MAX, path)
    return (raw >> 1) ^ -(raw & 1), pos


def append_varint(out: bytearray, value: int) -> None:
    if value < INT32_MIN or value > INT32_MAX:
        raise EncodeError(f"varint out of int32 range: {value}")
    _append_unsigned(out, (value << 1) ^ (value >> 63))


def write_varint(value: int) -> bytes:
    out = bytearray()
    append_varint(out, value)
    return bytes(out)


def varint_size(value: int) -> int:
    if value < INT32_MIN or value > INT32_MAX:
        raise EncodeError(f"varint out of int32 range: {value}")
    return _unsigned_size(zigzag_encode(value))


# --- signed zigzag varlong (int64) ----------------------------------------------------------------------------


def read_varlong(buf: ReadableBuffer, pos: int, path: str = "varlong") -> tuple[int, int]:
    if 0 <= pos < len(buf) and (raw := buf[pos]) < 0x80:
        return (raw >> 1) ^ -(raw & 1), pos + 1
    raw, pos = _read_unsigned(buf, pos, 10, _UINT64_MAX, path)
    return (raw >> 1) ^ -(raw & 1), pos


def append_varlong(out: bytearray, value: int) -> None:
    if value < INT64_MIN or value > INT64_MAX:
        raise EncodeError(f"varlong out of int64 range: {value}")
    _append_unsigned(out, (value << 1) ^ (value >> 63))


def write_varlong(value: int) -> bytes:
    out = bytearray()
    append_varlong(out, value)
    return bytes(out)


def varlong_size(value: int) -> int:
    if value < INT64_MIN or value > INT64_MAX:
        raise EncodeError(f"varlong out of int64 range: {value}")
    return _unsigned_size(zigzag_encode(value))
