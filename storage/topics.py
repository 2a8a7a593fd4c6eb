"""Topic names, Kafka-style UUIDs, and the durable topic catalogue (``topics.json``).

In KRaft the controller's metadata log says which topics exist; a single broker has no controller, so the
catalogue is one JSON file in the log directory, replaced atomically on every change. It is the source of truth:
a partition directory without a catalogue entry is not loaded.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from protocol.kafka_uuid import kafka_uuid_from_str, kafka_uuid_to_str
from storage.errors import InvalidTopicError, LogDirError
from storage.files import atomic_write

__all__ = [
    "MAX_DIR_NAME_LENGTH",
    "MAX_TOPIC_NAME_LENGTH",
    "TopicCatalogue",
    "TopicInfo",
    "capped_dir_name",
    "kafka_uuid_from_str",
    "kafka_uuid_to_str",
    "new_kafka_uuid",
    "parse_capped_dir_name",
    "topic_collision",
    "validate_topic_name",
]

#: Kafka's limit: 255 minus room for a partition suffix and the ``.deleted``-style renames of the directory.
MAX_TOPIC_NAME_LENGTH = 249
#: The longest file name most file systems accept (ext4, xfs, tmpfs: NAME_MAX).
MAX_DIR_NAME_LENGTH = 255
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")
_CAPPED_DIR = re.compile(r"(?P<topic>.*)-(?P<partition>[0-9]+)\.(?P<unique>[0-9a-f]{32})(?P<suffix>-[a-z]+)")
_ZERO_UUID = uuid.UUID(int=0)
#: Kafka reserves Uuid(0, 1) for the metadata topic.
_METADATA_TOPIC_ID = uuid.UUID(int=1)
_CATALOGUE_VERSION = 1


def validate_topic_name(name: str) -> None:
    """Kafka's ``Topic.validate``: raise InvalidTopicError (INVALID_TOPIC_EXCEPTION) for an illegal name."""
    # Kafka 4.4's wording, the same in CreateTopics, DescribeConfigs and AlterConfigs (seen from the reference broker).
    if not name:
        raise InvalidTopicError("Topic name is invalid: the empty string is not allowed")
    if name in (".", ".."):
        raise InvalidTopicError(f"Topic name is invalid: '{name}' is not allowed")
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        raise InvalidTopicError(
            f"Topic name is invalid: the length of '{name}' is longer than the max allowed length "
            f"{MAX_TOPIC_NAME_LENGTH}"
        )
    if not _LEGAL.fullmatch(name):
        raise InvalidTopicError(
            f"Topic name is invalid: '{name}' contains one or more characters other than ASCII alphanumerics, '.', "
            "'_' and '-'"
        )


def capped_dir_name(topic: str, partition: int, unique_id: uuid.UUID, suffix: str) -> str:
    """Kafka's ``LocalLog.logDirNameWithSuffixCappedLength``: ``<topic>-<partition>.<32 hex><suffix>``, with the
    topic cut short so the whole name fits :data:`MAX_DIR_NAME_LENGTH` (a 249-character topic plus the suffix
    would not, and its rename would fail with "File name too long").
    """
    tail = f"-{partition}.{unique_id.hex}{suffix}"
    return topic[: max(0, MAX_DIR_NAME_LENGTH - len(tail))] + tail


def parse_capped_dir_name(name: str, suffix: str) -> tuple[str, int, uuid.UUID] | None:
    """(topic prefix, partition, unique id) of a name made by :func:`capped_dir_name`, else None.

    The topic may have been cut short, so only the unique id identifies what the directory belonged to.
    """
    match = _CAPPED_DIR.fullmatch(name)
    if match is None or match["suffix"] != suffix:
        return None
    return match["topic"], int(match["partition"]), uuid.UUID(hex=match["unique"])


def topic_collision(name: str, existing: Iterable[str]) -> str | None:
    """An existing topic that differs from ``name`` only by '.' vs '_' (their metric names would clash)."""
    key = name.replace(".", "_")
    for other in existing:
        if other != name and other.replace(".", "_") == key:
            return other
    return None


def new_kafka_uuid() -> uuid.UUID:
    """Kafka's ``Uuid.randomUuid``: random, never the reserved ids, never a string form starting with '-'."""
    while True:
        value = uuid.uuid4()
        if value not in (_ZERO_UUID, _METADATA_TOPIC_ID) and not kafka_uuid_to_str(value).startswith("-"):
            return value


@dataclass(frozen=True, slots=True)
class TopicInfo:
    """A topic as the catalogue records it; ``configs`` holds only the per-topic overrides."""

    name: str
    topic_id: uuid.UUID
    partitions: int
    configs: Mapping[str, str] = field(default_factory=dict)
    #: How many nodes hold each partition (a test cluster's simulated replicas, broker.leadership); 1 on one node.
    replication_factor: int = 1

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "topic_id": kafka_uuid_to_str(self.topic_id),
            "partitions": self.partitions,
            "configs": dict(sorted(self.configs.items())),
        }
        if self.replication_factor != 1:  # a one-node catalogue stays as it was written before clusters
            entry["replication_factor"] = self.replication_factor
        return entry

    @classmethod
    def from_json(cls, name: str, data: Mapping[str, Any]) -> TopicInfo:
        configs = data.get("configs", {})
        if not isinstance(configs, dict) or not all(isinstance(v, str) for v in configs.values()):
            raise ValueError(f"bad configs for topic {name}")
        partitions = data["partitions"]
        if not isinstance(partitions, int) or partitions < 1:
            raise ValueError(f"bad partition count for topic {name}")
        factor = data.get("replication_factor", 1)
        if not isinstance(factor, int) or factor < 1:
            raise ValueError(f"bad replication factor for topic {name}")
        return cls(name, kafka_uuid_from_str(str(data["topic_id"])), partitions, dict(configs), factor)


class TopicCatalogue:
    """Load and atomically save ``topics.json``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[str, TopicInfo]:
        """The recorded topics; a missing file is an empty catalogue, an unreadable one is an error.

        Refusing to start on a corrupt catalogue is deliberate: guessing would hide (or wrongly revive) topics.
        """
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        try:
            data = json.loads(text)
            version = data.get("version")
            topics = data["topics"]
            loaded = {name: TopicInfo.from_json(name, entry) for name, entry in topics.items()}
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise LogDirError(f"cannot read topic catalogue {self.path}: {exc}") from None
        if version != _CATALOGUE_VERSION:
            raise LogDirError(f"topic catalogue {self.path} has unsupported version {version!r}")
        return loaded

    def save(self, topics: Mapping[str, TopicInfo]) -> None:
        data = {
            "version": _CATALOGUE_VERSION,
            "topics": {name: topics[name].to_json() for name in sorted(topics)},
        }
        atomic_write(self.path, (json.dumps(data, indent=2) + "\n").encode())
