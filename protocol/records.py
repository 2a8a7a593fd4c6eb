"""Kafka record batches, message format v2 (magic 2).

Request codecs carry record sets as opaque bytes; this module is the one place that looks inside them, for the
log storage (offsets, CRC, torn-tail recovery), the ``__consumer_offsets`` topic and tools.

Layout (big-endian fixed-width header, zigzag varints inside records)::

    baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 | magic int8 | crc uint32 |
    attributes int16 | lastOffsetDelta int32 | baseTimestamp int64 | maxTimestamp int64 |
    producerId int64 | producerEpoch int16 | baseSequence int32 | recordCount int32 | records...

``batchLength`` counts the bytes after itself; the CRC32C covers attributes through the end. With compression
only the records section is compressed; the header, including ``recordCount``, stays plain so storage and Fetch
can work from :func:`peek_batch_header` without decompressing anything.

Everything read from a buffer is treated as hostile: each length is checked against what is left before it is
sliced, every loop consumes input on each turn, decompressed output is capped, and the only exception that bad
bytes can raise is :class:`~protocol.errors.DecodeError`.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Generic, NamedTuple, TypeVar

import cramjam

from protocol import checksum as crc32c
from protocol.errors import DecodeError, EncodeError
from protocol.varint import (
    INT32_MAX,
    ReadableBuffer,
    append_varint,
    append_varlong,
    read_uvarint,
    read_varint,
    read_varlong,
    write_varint,
)

__all__ = [
    "BATCH_HEADER_SIZE",
    "DEFAULT_MAX_DECOMPRESSED_SIZE",
    "LOG_OVERHEAD",
    "MAGIC",
    "NO_PARTITION_LEADER_EPOCH",
    "NO_PRODUCER_EPOCH",
    "NO_PRODUCER_ID",
    "NO_SEQUENCE",
    "NO_TIMESTAMP",
    "BatchHeader",
    "BatchScan",
    "Compression",
    "Record",
    "RecordBatch",
    "RecordsRegion",
    "TimestampType",
    "batch_records_region",
    "compress",
    "decode_batch",
    "decompress",
    "encode_batch",
    "iter_batch_headers",
    "iter_batches",
    "parse_records",
    "peek_batch_header",
    "read_batch_records",
    "verify_batch_crc",
]

MAGIC = 2
BATCH_HEADER_SIZE = 61
#: baseOffset + batchLength: the bytes in front of what batchLength counts.
LOG_OVERHEAD = 12
_MIN_BATCH_LENGTH = BATCH_HEADER_SIZE - LOG_OVERHEAD
_MAGIC_OFFSET = 16
_CRC_OFFSET = 17
_ATTRIBUTES_OFFSET = 21

NO_PARTITION_LEADER_EPOCH = -1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_TIMESTAMP = -1

#: Upper bound on one batch's decompressed records section. Kafka's own default max.message.bytes is ~1 MiB, so
#: 64 MiB only rejects payloads that no sane producer sends, while capping what a compression bomb can allocate.
DEFAULT_MAX_DECOMPRESSED_SIZE = 64 * 1024 * 1024

_HEADER = struct.Struct(">qiibIhiqqqhii")
_BATCH_LENGTH = struct.Struct(">i")
_CRC = struct.Struct(">I")
_BE_INT32 = struct.Struct(">i")
_LE_UINT32 = struct.Struct("<I")
_LE_UINT64 = struct.Struct("<Q")

_COMPRESSION_MASK = 0x07
_TIMESTAMP_TYPE_BIT = 0x08
_TRANSACTIONAL_BIT = 0x10
_CONTROL_BIT = 0x20
_DELETE_HORIZON_BIT = 0x40

Header = tuple[str, bytes | None]


class Compression(IntEnum):
    """Codec ids as stored in attribute bits 0-2."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


class TimestampType(IntEnum):
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


@dataclass(slots=True)
class Record:
    """One record as stored: offsets and timestamps are deltas against the batch that holds it.

    Not frozen, unlike the batch types: a frozen dataclass's ``__init__`` costs about four times as much, and
    record construction dominates decoding.
    """

    offset_delta: int
    timestamp_delta: int
    key: bytes | None
    value: bytes | None
    #: Header keys are text in Kafka, but Java decodes them leniently; invalid UTF-8 is kept as lone surrogates
    #: (``surrogateescape``) so that decoding never fails and re-encoding gives back the original bytes.
    headers: list[Header] = field(default_factory=list)
    #: Unused by Kafka so far (always 0); kept so a batch re-encodes byte for byte.
    attributes: int = 0


class _Positions:
    """Offset and sequence arithmetic shared by the parsed header and the full batch."""

    __slots__ = ()
    base_offset: int
    last_offset_delta: int
    base_sequence: int

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def last_sequence(self) -> int:
        """Sequence numbers wrap at int32 max (as in Java's ``DefaultRecordBatch.incrementSequence``)."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return (self.base_sequence + self.last_offset_delta) % (INT32_MAX + 1)


@dataclass(frozen=True, slots=True)
class BatchHeader(_Positions):
    """The fixed 61-byte header, parsed without touching the records.

    Storage indexes and Fetch need offsets, timestamps and producer state per batch; decoding records for that
    would cost a decompression per batch.
    """

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int

    @property
    def size(self) -> int:
        """Bytes the whole batch occupies, i.e. where the next batch starts relative to this one."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def compression(self) -> Compression:
        return Compression(self.attributes & _COMPRESSION_MASK)

    @property
    def timestamp_type(self) -> TimestampType:
        return TimestampType.LOG_APPEND_TIME if self.attributes & _TIMESTAMP_TYPE_BIT else TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & _TRANSACTIONAL_BIT)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & _CONTROL_BIT)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & _DELETE_HORIZON_BIT)


@dataclass(frozen=True, slots=True)
class RecordBatch(_Positions):
    """A batch as values, with the derived wire fields (length, CRC, count, magic) left to the encoder.

    ``last_offset_delta`` and ``max_timestamp`` are explicit rather than derived from the records because
    compaction may remove records while the batch must keep its original offset span. Attribute bits Kafka does
    not define (7-15) are not kept, so only batches with clean attributes re-encode byte for byte.
    """

    base_offset: int = 0
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH
    compression: Compression = Compression.NONE
    timestamp_type: TimestampType = TimestampType.CREATE_TIME
    is_transactional: bool = False
    is_control: bool = False
    #: When set, ``base_timestamp`` holds the delete horizon of a compacted batch (KIP-534).
    has_delete_horizon: bool = False
    last_offset_delta: int = 0
    base_timestamp: int = NO_TIMESTAMP
    max_timestamp: int = NO_TIMESTAMP
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    base_sequence: int = NO_SEQUENCE
    records: list[Record] = field(default_factory=list)

    @classmethod
    def from_records(
        cls,
        records: Sequence[Record],
        *,
        base_offset: int = 0,
        base_timestamp: int = NO_TIMESTAMP,
        compression: Compression = Compression.NONE,
        producer_id: int = NO_PRODUCER_ID,
        producer_epoch: int = NO_PRODUCER_EPOCH,
        base_sequence: int = NO_SEQUENCE,
        partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
        is_transactional: bool = False,
        is_control: bool = False,
    ) -> RecordBatch:
        """Build a fresh batch whose offset span and max timestamp come from its records, as a producer does."""
        last_offset_delta = max((r.offset_delta for r in records), default=0)
        max_delta = max((r.timestamp_delta for r in records), default=0)
        return cls(
            base_offset=base_offset,
            partition_leader_epoch=partition_leader_epoch,
            compression=compression,
            is_transactional=is_transactional,
            is_control=is_control,
            last_offset_delta=last_offset_delta,
            base_timestamp=base_timestamp,
            max_timestamp=base_timestamp + max_delta,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=base_sequence,
            records=list(records),
        )

    @property
    def attributes(self) -> int:
        return _attributes_of(self, self.compression)

    def offset_of(self, record: Record) -> int:
        return self.base_offset + record.offset_delta

    def timestamp_of(self, record: Record) -> int:
        """With LogAppendTime the broker stamps only the batch, so every record reads ``max_timestamp``."""
        if self.timestamp_type == TimestampType.LOG_APPEND_TIME:
            return self.max_timestamp
        return self.base_timestamp + record.timestamp_delta

    def absolute(self) -> Iterator[tuple[int, int, Record]]:
        """(offset, timestamp, record) for each record, which is what consumers and tools actually want."""
        for record in self.records:
            yield self.offset_of(record), self.timestamp_of(record), record


def _attributes_of(batch: RecordBatch, compression: Compression) -> int:
    return (
        int(compression)
        | (_TIMESTAMP_TYPE_BIT if batch.timestamp_type == TimestampType.LOG_APPEND_TIME else 0)
        | (_TRANSACTIONAL_BIT if batch.is_transactional else 0)
        | (_CONTROL_BIT if batch.is_control else 0)
        | (_DELETE_HORIZON_BIT if batch.has_delete_horizon else 0)
    )


# --- compression ------------------------------------------------------------------------------------------------

# Java producers write snappy through xerial's SnappyOutputStream: this 16-byte header (magic, version 1,
# compatible version 1) then blocks of [int32 BE length][raw snappy]. librdkafka writes raw snappy instead, and
# Java's SnappyInputStream reads both, so decoding must too.
_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_XERIAL_HEADER_SIZE = len(_XERIAL_HEADER)
_XERIAL_BLOCK_SIZE = 32 * 1024  # snappy-java's default; Kafka keeps it

_LZ4_MAGIC = 0x184D2204
_ZSTD_MAGIC = 0xFD2FB528
# LZ4 and zstd share the skippable-frame range 0x184D2A50..0x184D2A5F.
_SKIPPABLE_MASK = 0xFFFFFFF0
_SKIPPABLE_MAGIC = 0x184D2A50
_ZSTD_MAX_BLOCK = 128 * 1024

_GZIP_WBITS = 16 + zlib.MAX_WBITS
_GZIP_MAGIC = b"\x1f\x8b"
_GZIP_LEVEL = 6  # java.util.zip.Deflater's default, which Kafka uses unless told otherwise
_ZSTD_LEVEL = 3  # Kafka's default zstd level (KIP-390)


def compress(codec: Compression, data: ReadableBuffer) -> bytes:
    """Compress a records section the way Java clients do, so Java consumers can read what we write."""
    codec = _codec(codec)
    if codec is Compression.NONE:
        return bytes(data)
    if codec is Compression.GZIP:
        deflater = zlib.compressobj(_GZIP_LEVEL, zlib.DEFLATED, _GZIP_WBITS)
        return deflater.compress(data) + deflater.flush()
    if codec is Compression.SNAPPY:
        out = bytearray(_XERIAL_HEADER)
        view = memoryview(data)
        for start in range(0, len(view), _XERIAL_BLOCK_SIZE):
            block = cramjam.snappy.compress_raw(view[start : start + _XERIAL_BLOCK_SIZE])
            out += _BE_INT32.pack(len(block))
            out += block
        return bytes(out)
    if codec is Compression.LZ4:
        # Kafka's LZ4 reader rejects linked blocks (KIP-57); content checksum off as in aiokafka, which
        # interoperates with Java brokers.
        compressor = cramjam.lz4.Compressor(content_checksum=False, block_linked=False)
        compressor.compress(data if isinstance(data, bytes) else bytes(data))  # the streaming API wants bytes
        return bytes(compressor.finish())
    return bytes(cramjam.zstd.compress(data, level=_ZSTD_LEVEL))


def _codec(codec: int) -> Compression:
    """Accept plain ints too (attribute bits, config values), refusing ids Kafka does not define."""
    try:
        return Compression(codec)
    except ValueError:
        raise EncodeError(f"unknown compression codec {codec!r}") from None


def decompress(codec: Compression, data: ReadableBuffer, *, max_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE) -> bytes:
    """Decompress a records section, refusing anything that would grow beyond ``max_size``.

    cramjam decompressors take no output limit, so for snappy, LZ4 and zstd the frame structure is walked first
    to bound the output from block sizes before the decompressor is allowed to allocate; gzip goes through zlib,
    which does take a limit.
    """
    codec = Compression(codec)  # a bad id here is the caller's bug (headers are validated), so ValueError
    path = f"batch.records({codec.name.lower()})"
    if codec is Compression.NONE:
        return bytes(data)
    if codec is Compression.GZIP:
        return _gunzip(data, max_size, path)
    if codec is Compression.SNAPPY:
        return _unsnappy(data, max_size, path)
    if codec is Compression.LZ4:
        _check_bound(_lz4_output_bound(data, max_size, path), max_size, path)
        out = _cramjam_call(cramjam.lz4.decompress, data, path)
    else:
        _check_bound(_zstd_output_bound(data, max_size, path), max_size, path)
        out = _cramjam_call(cramjam.zstd.decompress, data, path)
    # Belt and braces: the bound walk trusts the decoder to honour block maxima.
    _check_bound(len(out), max_size, path)
    return out


def _cramjam_call(fn: Callable[[ReadableBuffer], Any], data: ReadableBuffer, path: str) -> bytes:
    try:
        return bytes(fn(data))
    except (cramjam.DecompressionError, ValueError) as exc:
        raise DecodeError(f"corrupt compressed data: {exc}", path=path, offset=0) from None


def _check_bound(size: int, max_size: int, path: str) -> None:
    if size > max_size:
        raise DecodeError(f"decompressed size {size} exceeds limit {max_size}", path=path, offset=0)


def _gunzip(data: ReadableBuffer, max_size: int, path: str) -> bytes:
    """Read gzip members as Java's GZIPInputStream does: concatenated members are read, other trailing bytes
    ignored, so we accept exactly what a Java broker accepts."""
    parts: list[bytes] = []
    total = 0
    rest: ReadableBuffer = data
    try:
        while True:
            inflater = zlib.decompressobj(_GZIP_WBITS)
            # max_length=0 would mean "unlimited"; budget+1 is always >= 1 and lets us detect overflow.
            chunk = inflater.decompress(rest, max_size - total + 1)
            total += len(chunk)
            _check_bound(total, max_size, path)
            if not inflater.eof:
                raise DecodeError("truncated gzip stream", path=path, offset=len(data) - len(rest))
            parts.append(chunk)
            rest = inflater.unused_data
            if rest[:2] != _GZIP_MAGIC:
                return b"".join(parts)
    except zlib.error as exc:
        raise DecodeError(f"corrupt gzip data: {exc}", path=path, offset=0) from None


def _unsnappy(data: ReadableBuffer, max_size: int, path: str) -> bytes:
    view = memoryview(data)
    if len(view) < _XERIAL_HEADER_SIZE or view[: len(_XERIAL_MAGIC)] != _XERIAL_MAGIC:
        return _unsnappy_raw(view, max_size, path, 0)
    # Version fields are ignored: some producers (e.g. older redpanda) wrote them little-endian.
    parts: list[bytes] = []
    total = 0
    pos = _XERIAL_HEADER_SIZE
    end = len(view)
    while pos < end:
        if end - pos < 4:
            raise DecodeError("truncated xerial block length", path=path, offset=pos)
        (length,) = _BE_INT32.unpack_from(view, pos)
        pos += 4
        if length < 0 or length > end - pos:
            raise DecodeError(f"xerial block length {length} exceeds payload", path=path, offset=pos - 4)
        block = _unsnappy_raw(view[pos : pos + length], max_size - total, path, pos)
        total += len(block)
        parts.append(block)
        pos += length
    return b"".join(parts)


def _unsnappy_raw(block: memoryview, budget: int, path: str, offset: int) -> bytes:
    # Raw snappy starts with the uncompressed length as a uvarint, and the decoder allocates exactly that.
    expected, _ = read_uvarint(block, 0, path)
    if expected > budget:
        raise DecodeError(
            f"snappy block of {expected} bytes exceeds remaining limit {budget}", path=path, offset=offset
        )
    return _cramjam_call(cramjam.snappy.decompress_raw, block, path)


def _skip_skippable_frame(data: ReadableBuffer, pos: int, path: str) -> int:
    if len(data) - pos < 8:
        raise DecodeError("truncated skippable frame", path=path, offset=pos)
    size: int = _LE_UINT32.unpack_from(data, pos + 4)[0]
    if size > len(data) - pos - 8:
        raise DecodeError("skippable frame exceeds payload", path=path, offset=pos)
    return pos + 8 + size


def _lz4_output_bound(data: ReadableBuffer, max_size: int, path: str) -> int:
    """Upper bound of LZ4 frame output: stored blocks count as-is, compressed ones as the frame's block maximum.

    Bounds are within one block of the truth for real frames, which keeps false rejections to batches already
    at the limit.
    """
    end = len(data)
    if end == 0:
        raise DecodeError("empty lz4 payload", path=path, offset=0)
    pos = 0
    total = 0
    while pos < end:
        if end - pos < 4:
            raise DecodeError("truncated lz4 frame magic", path=path, offset=pos)
        (magic,) = _LE_UINT32.unpack_from(data, pos)
        if magic & _SKIPPABLE_MASK == _SKIPPABLE_MAGIC:
            pos = _skip_skippable_frame(data, pos, path)
            continue
        if magic != _LZ4_MAGIC:
            raise DecodeError(f"bad lz4 frame magic {magic:#x}", path=path, offset=pos)
        if end - pos < 7:
            raise DecodeError("truncated lz4 frame descriptor", path=path, offset=pos)
        flg = data[pos + 4]
        block_size_id = (data[pos + 5] >> 4) & 0x07
        if flg >> 6 != 1 or block_size_id < 4:
            raise DecodeError("unsupported lz4 frame descriptor", path=path, offset=pos + 4)
        block_max = 1 << (2 * block_size_id + 8)
        descriptor = 7 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
        if end - pos < descriptor:
            raise DecodeError("truncated lz4 frame descriptor", path=path, offset=pos)
        if flg & 0x08:
            # A declared content size may be preallocated by the decoder, so it must respect the limit too.
            (content_size,) = _LE_UINT64.unpack_from(data, pos + 6)
            _check_bound(total + content_size, max_size, path)
        pos += descriptor
        block_trailer = 4 if flg & 0x10 else 0
        while True:
            if end - pos < 4:
                raise DecodeError("truncated lz4 block", path=path, offset=pos)
            (word,) = _LE_UINT32.unpack_from(data, pos)
            pos += 4
            if word == 0:
                break
            length = word & 0x7FFFFFFF
            if length > block_max or length + block_trailer > end - pos:
                raise DecodeError(f"lz4 block length {length} out of bounds", path=path, offset=pos - 4)
            total += length if word & 0x80000000 else block_max
            _check_bound(total, max_size, path)
            pos += length + block_trailer
        if flg & 0x04:
            pos += 4
            if pos > end:
                raise DecodeError("truncated lz4 content checksum", path=path, offset=end)
    return total


def _zstd_output_bound(data: ReadableBuffer, max_size: int, path: str) -> int:
    """Upper bound of zstd output from block headers; also refuses windows the decoder would have to allocate.

    Raw and RLE blocks state their regenerated size; compressed blocks are capped by the block maximum
    (min(window, 128 KiB)). RLE blocks make zstd bombs cheap (4 bytes per 128 KiB), hence the walk. A frame
    without a content size makes the decoder allocate its whole window, so a window above the limit is refused
    as well; with the default limit that only hits zstd's ultra levels (20-22), whose windows reach 128 MiB.
    """
    end = len(data)
    if end == 0:
        raise DecodeError("empty zstd payload", path=path, offset=0)
    pos = 0
    total = 0
    while pos < end:
        if end - pos < 4:
            raise DecodeError("truncated zstd frame magic", path=path, offset=pos)
        (magic,) = _LE_UINT32.unpack_from(data, pos)
        if magic & _SKIPPABLE_MASK == _SKIPPABLE_MAGIC:
            pos = _skip_skippable_frame(data, pos, path)
            continue
        if magic != _ZSTD_MAGIC:
            raise DecodeError(f"bad zstd frame magic {magic:#x}", path=path, offset=pos)
        if end - pos < 5:
            raise DecodeError("truncated zstd frame header", path=path, offset=pos)
        descriptor = data[pos + 4]
        single_segment = bool(descriptor & 0x20)
        fcs_size = (1 if single_segment else 0, 2, 4, 8)[descriptor >> 6]
        header_size = 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[descriptor & 0x03] + fcs_size
        if descriptor & 0x08 or end - pos < header_size:
            raise DecodeError("bad zstd frame header", path=path, offset=pos + 4)
        window = -1
        if not single_segment:
            window_descriptor = data[pos + 5]
            window_base = 1 << (10 + (window_descriptor >> 3))
            window = window_base + (window_base >> 3) * (window_descriptor & 0x07)
        content_size = -1
        if fcs_size:
            raw = bytes(data[pos + header_size - fcs_size : pos + header_size])
            content_size = int.from_bytes(raw, "little") + (256 if fcs_size == 2 else 0)
        if single_segment:
            window = content_size
        # The decoder buffers min(window, content size); refuse frames that would make it allocate past the limit.
        buffer_need = window if content_size < 0 else min(window, content_size)
        _check_bound(max(buffer_need, total + max(content_size, 0)), max_size, path)
        block_max = min(window, _ZSTD_MAX_BLOCK)
        pos += header_size
        while True:
            if end - pos < 3:
                raise DecodeError("truncated zstd block header", path=path, offset=pos)
            block_header = data[pos] | (data[pos + 1] << 8) | (data[pos + 2] << 16)
            pos += 3
            block_type = (block_header >> 1) & 0x03
            block_size = block_header >> 3
            if block_type == 0:  # raw
                total += block_size
                pos += block_size
            elif block_type == 1:  # RLE: one byte repeated block_size times
                total += block_size
                pos += 1
            elif block_type == 2:  # compressed
                if block_size > block_max:
                    raise DecodeError("zstd block exceeds block maximum", path=path, offset=pos - 3)
                total += block_max
                pos += block_size
            else:
                raise DecodeError("reserved zstd block type", path=path, offset=pos - 3)
            if pos > end:
                raise DecodeError("truncated zstd block", path=path, offset=end)
            _check_bound(total, max_size, path)
            if block_header & 1:
                break
        if descriptor & 0x04:
            pos += 4
            if pos > end:
                raise DecodeError("truncated zstd checksum", path=path, offset=end)
    return total


# --- header -------------------------------------------------------------------------------------------------------


def peek_batch_header(buf: ReadableBuffer, pos: int = 0) -> BatchHeader:
    """Parse the 61-byte header at ``pos``; the rest of the batch need not be present yet.

    That lets a reader learn how much more to read (``size``) from a header-sized read alone.
    """
    available = len(buf) - pos
    if pos < 0 or available < _MAGIC_OFFSET + 1:
        raise DecodeError("truncated batch header", path="batch", offset=pos)
    magic = buf[pos + _MAGIC_OFFSET]
    if magic != MAGIC:
        # v0/v1 message sets put magic at the same offset, so this is where legacy formats are recognised.
        raise DecodeError(f"unsupported record format magic {magic}", path="batch.magic", offset=pos + _MAGIC_OFFSET)
    if available < BATCH_HEADER_SIZE:
        raise DecodeError("truncated batch header", path="batch", offset=pos)
    header = BatchHeader(*_HEADER.unpack_from(buf, pos))
    if header.batch_length < _MIN_BATCH_LENGTH:
        raise DecodeError(
            f"batch length {header.batch_length} below minimum {_MIN_BATCH_LENGTH}",
            path="batch.batchLength",
            offset=pos + 8,
        )
    if header.attributes & _COMPRESSION_MASK > Compression.ZSTD:
        raise DecodeError(
            f"unknown compression codec {header.attributes & _COMPRESSION_MASK}",
            path="batch.attributes",
            offset=pos + _ATTRIBUTES_OFFSET,
        )
    if header.record_count < 0:
        raise DecodeError(f"negative record count {header.record_count}", path="batch.recordCount", offset=pos + 57)
    return header


def verify_batch_crc(buf: ReadableBuffer, pos: int = 0, header: BatchHeader | None = None) -> None:
    """Check the CRC32C of the complete batch at ``pos``; storage calls this on recovery and on untrusted input."""
    if header is None:
        header = peek_batch_header(buf, pos)
    end = _batch_end(buf, pos, header)
    with memoryview(buf) as view:
        actual = int(crc32c.crc32c(view[pos + _ATTRIBUTES_OFFSET : end]))
    if actual != header.crc:
        raise DecodeError(
            f"CRC32C mismatch: stored {header.crc:#010x}, computed {actual:#010x}",
            path="batch.crc",
            offset=pos + _CRC_OFFSET,
        )


def _batch_end(buf: ReadableBuffer, pos: int, header: BatchHeader) -> int:
    end = pos + header.size
    if end > len(buf):
        raise DecodeError(
            f"truncated batch: {header.size} bytes declared, {len(buf) - pos} present", path="batch", offset=pos
        )
    return end


# --- records --------------------------------------------------------------------------------------------------------


class RecordsRegion(NamedTuple):
    """Where a batch's records sit once readable: ``data[start:end]``, decompressed when the batch is compressed;
    ``where`` names it in decode errors."""

    data: ReadableBuffer
    start: int
    end: int
    where: str


def batch_records_region(
    buf: ReadableBuffer,
    pos: int,
    header: BatchHeader,
    *,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> RecordsRegion:
    """The records section of the complete batch at ``pos``, decompressed (bounded) if needed, without parsing it:
    a reader that only walks the records (``protocol.record_scan``) decompresses once, as the full parse would."""
    end = _batch_end(buf, pos, header)
    start = pos + BATCH_HEADER_SIZE
    codec = header.compression
    if codec is Compression.NONE:
        return RecordsRegion(buf, start, end, "batch.records")
    with memoryview(buf) as view:
        payload = decompress(codec, view[start:end], max_size=max_decompressed_size)
    return RecordsRegion(payload, 0, len(payload), f"batch.records({codec.name.lower()})")


def parse_records(region: RecordsRegion, count: int) -> list[Record]:
    """Exactly ``count`` records filling exactly the region (DecodeError otherwise)."""
    return _parse_records(region.data, region.start, region.end, count, region.where)


def read_batch_records(
    buf: ReadableBuffer,
    pos: int = 0,
    header: BatchHeader | None = None,
    *,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> list[Record]:
    """Decompress (if needed) and parse the records of the complete batch at ``pos``; does not check the CRC.

    Takes an already peeked header so callers that filtered on it do not parse it twice.
    """
    if header is None:
        header = peek_batch_header(buf, pos)
    region = batch_records_region(buf, pos, header, max_decompressed_size=max_decompressed_size)
    return parse_records(region, header.record_count)


def _parse_records(data: ReadableBuffer, pos: int, end: int, count: int, where: str) -> list[Record]:
    """Parse exactly ``count`` records filling exactly ``[pos, end)``.

    Every record consumes at least one byte, so a hostile count cannot make this spin or allocate beyond the
    input: it runs out of bytes first.
    """
    records: list[Record] = []
    append = records.append
    for index in range(count):
        try:
            record, pos = _parse_record(data, pos, end)
        except DecodeError as exc:
            raise DecodeError(exc.reason, path=f"{where}[{index}].{exc.path}", offset=exc.offset) from None
        append(record)
    if pos != end:
        raise DecodeError(f"{end - pos} bytes left after {count} records", path=where, offset=pos)
    return records


def _parse_record(data: ReadableBuffer, pos: int, end: int) -> tuple[Record, int]:
    length, pos = read_varint(data, pos, "length")
    record_end = pos + length
    if length <= 0 or record_end > end:
        raise DecodeError(f"record length {length} out of bounds", path="length", offset=pos)
    attributes = data[pos]
    pos += 1
    timestamp_delta, pos = read_varlong(data, pos, "timestampDelta")
    offset_delta, pos = read_varint(data, pos, "offsetDelta")
    key, pos = _read_bytes(data, pos, record_end, "key")
    value, pos = _read_bytes(data, pos, record_end, "value")
    header_count, pos = read_varint(data, pos, "headersCount")
    if header_count < 0:
        raise DecodeError(f"negative header count {header_count}", path="headersCount", offset=pos)
    headers: list[Header] = []
    for _ in range(header_count):
        key_length, pos = read_varint(data, pos, "headerKey")
        if key_length < 0 or key_length > record_end - pos:
            raise DecodeError(f"header key length {key_length} out of bounds", path="headerKey", offset=pos)
        header_key = bytes(data[pos : pos + key_length]).decode("utf-8", "surrogateescape")
        pos += key_length
        header_value, pos = _read_bytes(data, pos, record_end, "headerValue")
        headers.append((header_key, header_value))
    if pos != record_end:
        # Varints are read against the whole buffer, so a field may have run past the record; caught here.
        raise DecodeError(f"record fields end at {pos}, declared end {record_end}", path="length", offset=pos)
    signed_attributes = attributes - 256 if attributes > 127 else attributes
    return Record(offset_delta, timestamp_delta, key, value, headers, signed_attributes), pos


def _read_bytes(data: ReadableBuffer, pos: int, limit: int, path: str) -> tuple[bytes | None, int]:
    length, pos = read_varint(data, pos, path)
    if length < 0:
        if length != -1:
            # Java reads any negative length as null; only -1 is ever written, so anything else is corruption.
            raise DecodeError(f"invalid length {length}", path=path, offset=pos)
        return None, pos
    if length > limit - pos:
        raise DecodeError(f"length {length} exceeds record", path=path, offset=pos)
    return bytes(data[pos : pos + length]), pos + length


def _append_bytes(out: bytearray, value: bytes | None) -> None:
    if value is None:
        out.append(1)  # zigzag(-1)
        return
    append_varint(out, len(value))
    out += value


#: The zigzag varint of 0..63: one byte each (2n), which is what most record fields are.
_SMALL_VARINT = tuple(bytes((n << 1,)) for n in range(64))
_NULL_LENGTH = b"\x01"  # zigzag(-1)


def _varint_bytes(value: int) -> bytes:
    if 0 <= value < 64:
        return _SMALL_VARINT[value]
    if 0 < value < 8192:  # two bytes: offset deltas and lengths of a batch's first thousands of records
        zigzag = value << 1
        return bytes(((zigzag & 0x7F) | 0x80, zigzag >> 7))
    return write_varint(value)


def _append_record(out: bytearray, record: Record) -> None:
    timestamp_delta = record.timestamp_delta
    if not record.headers and not record.attributes and 0 <= timestamp_delta < 64:
        # The common shape (every record the coordinators write): the same bytes, with no per-field calls.
        key, value = record.key, record.value
        fields = b"".join(
            (
                b"\x00",
                _SMALL_VARINT[timestamp_delta],
                _varint_bytes(record.offset_delta),
                _NULL_LENGTH if key is None else _varint_bytes(len(key)),
                key or b"",
                _NULL_LENGTH if value is None else _varint_bytes(len(value)),
                value or b"",
                b"\x00",
            )
        )
        out += _varint_bytes(len(fields))
        out += fields
        return
    if not -128 <= record.attributes <= 127:
        raise EncodeError(f"record attributes out of int8 range: {record.attributes}")
    body = bytearray()
    body.append(record.attributes & 0xFF)
    append_varlong(body, record.timestamp_delta)
    append_varint(body, record.offset_delta)
    _append_bytes(body, record.key)
    _append_bytes(body, record.value)
    append_varint(body, len(record.headers))
    for header_key, header_value in record.headers:
        try:
            _append_bytes(body, header_key.encode("utf-8", "surrogateescape"))
        except UnicodeEncodeError as exc:
            raise EncodeError(f"header key {header_key!r} is not encodable: {exc}") from None
        _append_bytes(body, header_value)
    append_varint(out, len(body))
    out += body


# --- batches --------------------------------------------------------------------------------------------------------


def encode_batch(batch: RecordBatch, compression: Compression | None = None) -> bytes:
    """Serialize a batch, computing batchLength, recordCount and the CRC.

    ``compression`` overrides ``batch.compression``, so a stored batch can be re-encoded with another codec.
    """
    codec = _codec(batch.compression if compression is None else compression)
    body = bytearray()
    for record in batch.records:
        _append_record(body, record)
    payload: ReadableBuffer = body if codec is Compression.NONE else compress(codec, body)
    return _framed(
        payload,
        batch.base_offset,
        batch.partition_leader_epoch,
        _attributes_of(batch, codec),
        batch.last_offset_delta,
        batch.base_timestamp,
        batch.max_timestamp,
        batch.producer_id,
        batch.producer_epoch,
        batch.base_sequence,
        len(batch.records),
    )


def encode_key_value_batch(
    records: Sequence[tuple[bytes, bytes | None]],
    timestamp: int,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    *,
    is_transactional: bool = False,
) -> bytes:
    """An uncompressed batch of (key, value) records with no headers, every timestamp `timestamp`, offset deltas
    0..n-1: byte for byte what `encode_batch` makes of the same `RecordBatch` (base offset 0, no leader epoch,
    CreateTime), without building a `Record` per pair. The coordinators write every batch in this shape, one
    record per committed offset, so this is the hot encoding of durable commits."""
    parts: list[bytes] = []
    append = parts.append
    small = _SMALL_VARINT
    for delta, (key, value) in enumerate(records):
        fields = b"".join(
            (
                b"\x00\x00",  # attributes, timestamp delta 0
                small[delta] if delta < 64 else _varint_bytes(delta),
                _varint_bytes(len(key)),
                key,
                _NULL_LENGTH if value is None else _varint_bytes(len(value)),
                value or b"",
                b"\x00",  # no headers
            )
        )
        append(_varint_bytes(len(fields)))
        append(fields)
    return _framed(
        b"".join(parts),
        0,
        NO_PARTITION_LEADER_EPOCH,
        _TRANSACTIONAL_BIT if is_transactional else 0,
        max(len(records) - 1, 0),
        timestamp,
        timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        len(records),
    )


def _framed(
    payload: ReadableBuffer,
    base_offset: int,
    partition_leader_epoch: int,
    attributes: int,
    last_offset_delta: int,
    base_timestamp: int,
    max_timestamp: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
    record_count: int,
) -> bytes:
    """The batch header (batchLength and CRC computed) followed by `payload`, the encoded records."""
    out = bytearray(BATCH_HEADER_SIZE)
    try:
        _HEADER.pack_into(
            out,
            0,
            base_offset,
            BATCH_HEADER_SIZE - LOG_OVERHEAD + len(payload),
            partition_leader_epoch,
            MAGIC,
            0,
            attributes,
            last_offset_delta,
            base_timestamp,
            max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            record_count,
        )
    except struct.error as exc:
        raise EncodeError(f"batch header field out of range: {exc}") from None
    out += payload
    with memoryview(out) as view:
        crc = int(crc32c.crc32c(view[_ATTRIBUTES_OFFSET:]))
    _CRC.pack_into(out, _CRC_OFFSET, crc)
    return bytes(out)


def decode_batch(
    buf: ReadableBuffer,
    pos: int = 0,
    *,
    verify_crc: bool = True,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> tuple[RecordBatch, int]:
    """Decode the batch at ``pos`` and return it with the position just past it."""
    header = peek_batch_header(buf, pos)
    if verify_crc:
        verify_batch_crc(buf, pos, header)
    records = read_batch_records(buf, pos, header, max_decompressed_size=max_decompressed_size)
    batch = RecordBatch(
        base_offset=header.base_offset,
        partition_leader_epoch=header.partition_leader_epoch,
        compression=header.compression,
        timestamp_type=header.timestamp_type,
        is_transactional=header.is_transactional,
        is_control=header.is_control,
        has_delete_horizon=header.has_delete_horizon,
        last_offset_delta=header.last_offset_delta,
        base_timestamp=header.base_timestamp,
        max_timestamp=header.max_timestamp,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        records=records,
    )
    return batch, pos + header.size


T = TypeVar("T")


class BatchScan(Generic[T]):
    """Iterates batches in a buffer and remembers where the valid data ends.

    The storage layer must cut a log back to its last whole batch after a crash. Iteration ends quietly at an
    incomplete trailing batch (``truncated`` is then set); a complete batch that is corrupt raises DecodeError.
    Either way ``valid_end`` is the position just after the last batch that was yielded, which is where to
    truncate.
    """

    def __init__(self, buf: ReadableBuffer, pos: int, decode: Callable[[ReadableBuffer, int], T]) -> None:
        self._buf = buf
        self._decode = decode
        self.valid_end = pos
        self.truncated = False

    def __iter__(self) -> BatchScan[T]:
        return self

    def __next__(self) -> tuple[int, T]:
        buf = self._buf
        pos = self.valid_end
        available = len(buf) - pos
        if available <= 0:
            raise StopIteration
        if available < LOG_OVERHEAD:
            self.truncated = True
            raise StopIteration
        (batch_length,) = _BATCH_LENGTH.unpack_from(buf, pos + 8)
        if batch_length < _MIN_BATCH_LENGTH:
            # Corruption, not a torn write: a torn write leaves a short tail, never a bad length in a long one.
            raise DecodeError(
                f"batch length {batch_length} below minimum {_MIN_BATCH_LENGTH}",
                path="batch.batchLength",
                offset=pos + 8,
            )
        if batch_length + LOG_OVERHEAD > available:
            self.truncated = True
            raise StopIteration
        item = self._decode(buf, pos)
        self.valid_end = pos + LOG_OVERHEAD + batch_length
        return pos, item


def iter_batches(
    buf: ReadableBuffer,
    pos: int = 0,
    *,
    verify_crc: bool = True,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> BatchScan[RecordBatch]:
    """Yield ``(position, batch)`` for each complete batch; see :class:`BatchScan` for how the scan ends."""

    def decode(data: ReadableBuffer, at: int) -> RecordBatch:
        return decode_batch(data, at, verify_crc=verify_crc, max_decompressed_size=max_decompressed_size)[0]

    return BatchScan(buf, pos, decode)


def iter_batch_headers(buf: ReadableBuffer, pos: int = 0, *, verify_crc: bool = True) -> BatchScan[BatchHeader]:
    """Like :func:`iter_batches` but without touching records: what log recovery and index rebuilds need."""

    def decode(data: ReadableBuffer, at: int) -> BatchHeader:
        header = peek_batch_header(data, at)
        if verify_crc:
            verify_batch_crc(data, at, header)
        return header

    return BatchScan(buf, pos, decode)
