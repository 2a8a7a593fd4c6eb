"""The floor of Produce and Fetch on this stack: what `bench/floors.py`'s server does for the throughput rows.

A Produce or Fetch through any broker written on this stack costs at least: splitting the frame off the socket,
decoding the request and encoding the answer with our codecs (`protocol.api`, the same calls the broker makes),
one append per produced batch (`os.writev` of the rewritten base offset and the rest of the batch, no copy of the
records in Python) and one `os.pread` per fetched partition, into the page cache of a file per partition, as a
broker that keeps its log in files does. It validates nothing (no CRC, no record walk), keeps no index beyond a
list of batch positions, writes no log line and answers every partition as its leader. Whatever our broker spends
above this, driven by the same load generator in the same run (`ours/floor` in `python -m bench targets`), is the
broker's own work; what the floor itself reaches is what the file system, the socket and CPython allow here.

It serves what the throughput rows send: CreateTopics (any version), Metadata (any version: every topic asked
for, created with `AUTO_PARTITIONS` if unknown), Produce with one batch per partition and Fetch (whole batches from
the one holding the fetch offset, up to the partition's max bytes, sent as a part of their own). Anything else
answers None: the connection closes (`floors.FloorConnection`).
"""

from __future__ import annotations

import bisect
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from protocol import api
from protocol.messages.create_topics import CreatableTopicResult, CreateTopicsResponse
from protocol.messages.fetch import FetchableTopicResponse, FetchResponse, PartitionData
from protocol.messages.metadata import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from protocol.messages.produce import PartitionProduceResponse, ProduceResponse, TopicProduceResponse
from protocol.registry import ApiKey

#: Partitions of a topic first named by Metadata (the mock's auto-creation count).
AUTO_PARTITIONS = 4
_BASE_OFFSET = struct.Struct(">q")
_LAST_OFFSET_DELTA = struct.Struct(">i")
_LAST_OFFSET_DELTA_AT = 23  # base offset 8, length 4, leader epoch 4, magic 1, crc 4, attributes 2
NODE_ID = 0


@dataclass(frozen=True, slots=True)
class Payload:
    """Fetched record bytes the encoder leaves out of its buffer (a bytes field holding an object with a `len()`,
    as our broker's streamed record sets are) and the answer sends as their own part: never copied in Python."""

    data: bytes

    def __len__(self) -> int:
        return len(self.data)


@dataclass
class PartitionFile:
    """One partition's batches appended to one file, with each batch's base offset, position and size."""

    fd: int
    next_offset: int = 0
    size: int = 0
    bases: list[int] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)

    def append(self, batch: memoryview) -> int:
        """Store one batch at the next offset (its base offset rewritten on the way out); returns that offset."""
        base = self.next_offset
        written = os.writev(self.fd, [_BASE_OFFSET.pack(base), batch[_BASE_OFFSET.size :]])
        self.bases.append(base)
        self.positions.append(self.size)
        self.lengths.append(written)
        self.size += written
        self.next_offset = base + _LAST_OFFSET_DELTA.unpack_from(batch, _LAST_OFFSET_DELTA_AT)[0] + 1
        return base

    def read(self, offset: int, max_bytes: int) -> bytes:
        """Whole batches from the one holding `offset`, at least one, up to `max_bytes`."""
        first = bisect.bisect_right(self.bases, offset) - 1
        if first < 0 or offset >= self.next_offset:
            return b""
        last, length = first, self.lengths[first]
        while last + 1 < len(self.lengths) and length + self.lengths[last + 1] <= max_bytes:
            last += 1
            length += self.lengths[last]
        return os.pread(self.fd, length, self.positions[first])


class DataFloor:
    """The topics of one floor server, as files under `data_dir`."""

    def __init__(self, data_dir: Path, host: str, port: int) -> None:
        self._dir = data_dir
        self._broker = MetadataResponseBroker(node_id=NODE_ID, host=host, port=port)
        self._topics: dict[str, list[PartitionFile]] = {}

    def close(self) -> None:
        for partitions in self._topics.values():
            for partition in partitions:
                os.close(partition.fd)

    def _create(self, name: str, partitions: int) -> list[PartitionFile]:
        if name not in self._topics:
            self._topics[name] = [
                PartitionFile(os.open(self._dir / f"{name}-{p}.log", os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644))
                for p in range(partitions)
            ]
        return self._topics[name]

    def answer(self, frame: bytes) -> list[Any] | None:
        """The answer's parts to one request frame (size prefix first), or None for a request it does not serve."""
        request = api.decode_request(frame)
        header, body = request.header, request.body
        key, version, correlation_id = header.request_api_key, header.request_api_version, header.correlation_id
        if key == ApiKey.PRODUCE:
            answer: Any = self._produce(body)
        elif key == ApiKey.FETCH:
            answer = self._fetch(body)
        elif key == ApiKey.METADATA:
            answer = self._metadata(body)
        elif key == ApiKey.CREATE_TOPICS:
            answer = self._create_topics(body)
        else:
            return None
        parts = api.encode_response_parts(key, version, correlation_id, answer)
        return [part.data if isinstance(part, Payload) else part for part in parts]

    def _produce(self, body: Any) -> ProduceResponse:
        topics = []
        for topic in body.topic_data:
            files = self._topics.get(topic.name) or self._create(topic.name, AUTO_PARTITIONS)
            answers = [
                PartitionProduceResponse(
                    index=data.index, base_offset=files[data.index].append(memoryview(data.records))
                )
                for data in topic.partition_data
            ]
            topics.append(TopicProduceResponse(name=topic.name, partition_responses=answers))
        return ProduceResponse(responses=topics)

    def _fetch(self, body: Any) -> FetchResponse:
        topics = []
        for topic in body.topics:
            files = self._topics[topic.topic]
            partitions = []
            for wanted in topic.partitions:
                data = files[wanted.partition]
                records = data.read(wanted.fetch_offset, wanted.partition_max_bytes)
                partitions.append(
                    PartitionData(
                        partition_index=wanted.partition,
                        high_watermark=data.next_offset,
                        last_stable_offset=data.next_offset,
                        log_start_offset=0,
                        records=cast(bytes, Payload(records)),  # a deferred part (`Payload`)
                    )
                )
            topics.append(FetchableTopicResponse(topic=topic.topic, partitions=partitions))
        return FetchResponse(responses=topics)

    def _metadata(self, body: Any) -> MetadataResponse:
        topics = []
        for asked in body.topics or []:
            files = self._topics.get(asked.name) or self._create(asked.name, AUTO_PARTITIONS)
            partitions = [
                MetadataResponsePartition(
                    partition_index=p, leader_id=NODE_ID, leader_epoch=0, replica_nodes=[NODE_ID], isr_nodes=[NODE_ID]
                )
                for p in range(len(files))
            ]
            topics.append(MetadataResponseTopic(name=asked.name, partitions=partitions))
        return MetadataResponse(brokers=[self._broker], cluster_id="floor", controller_id=NODE_ID, topics=topics)

    def _create_topics(self, body: Any) -> CreateTopicsResponse:
        results = []
        for topic in body.topics:
            self._create(topic.name, topic.num_partitions)
            results.append(
                CreatableTopicResult(name=topic.name, num_partitions=topic.num_partitions, replication_factor=1)
            )
        return CreateTopicsResponse(topics=results)
