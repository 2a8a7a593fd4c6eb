"""The broker's topics as the group coordinator's `TopicCatalog` (KIP-848 groups assign by topic id).

The coordinator asks on every consumer-group heartbeat whether topics changed, so `version` is one attribute read
(the log manager counts topic creations, deletions and growth) and the id index is rebuilt only when it moved.
Internal topics are left out: Kafka never assigns `__consumer_offsets` to a consumer group member.
"""

from __future__ import annotations

from collections.abc import Iterable

from coordinator.consumer_group.topics import TopicImage
from protocol.kafka_uuid import kafka_uuid_to_str
from storage.log_manager import LogManager
from storage.topics import TopicInfo

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


class LogTopicCatalog:
    """`TopicCatalog` over the log manager."""

    def __init__(self, logs: LogManager) -> None:
        self._logs = logs
        self._ids_version = -1
        self._by_id: dict[str, TopicInfo] = {}

    @property
    def version(self) -> int:
        return self._logs.topics_version

    def by_name(self, name: str) -> TopicImage | None:
        if name in INTERNAL_TOPICS:
            return None
        info = self._logs.topic(name)
        return None if info is None else _image(info)

    def by_id(self, topic_id: str) -> TopicImage | None:
        if self._ids_version != self._logs.topics_version:
            self._by_id = {kafka_uuid_to_str(info.topic_id): info for info in self._logs.topics()}
            self._ids_version = self._logs.topics_version
        info = self._by_id.get(topic_id)
        return None if info is None or info.name in INTERNAL_TOPICS else _image(info)

    def names(self) -> Iterable[str]:
        return [info.name for info in self._logs.topics() if info.name not in INTERNAL_TOPICS]


def _image(info: TopicInfo) -> TopicImage:
    return TopicImage(kafka_uuid_to_str(info.topic_id), info.name, info.partitions)
