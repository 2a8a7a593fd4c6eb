"""The broker's topic metadata as the consumer-group coordinator reads it (Kafka's `MetadataImage`).

KIP-848 moved assignment to the coordinator, so it must know every topic's id and partition count: subscriptions
name topics, assignments and heartbeats carry topic ids, and a topic created, deleted or grown changes the
target assignment of the groups subscribed to it. The coordinator stays sans-IO: the broker hands it a
`TopicCatalog` it can query synchronously, whose `version` moves whenever any topic changes, so a group notices a
change at its next heartbeat by comparing one integer (Kafka marks groups for a metadata refresh on every new
metadata image in the same spirit).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class TopicImage:
    """One topic: its id (Kafka's textual UUID), name and partition count."""

    topic_id: str
    name: str
    partitions: int


class TopicCatalog(Protocol):
    """What the coordinator may ask about topics; every call is cheap and synchronous."""

    @property
    def version(self) -> int:
        """Changes whenever a topic is created, deleted or gains partitions."""
        ...

    def by_name(self, name: str) -> TopicImage | None: ...

    def by_id(self, topic_id: str) -> TopicImage | None: ...

    def names(self) -> Iterable[str]: ...


class StaticTopicCatalog:
    """A catalog held in memory: the coordinator's tests, and a broker-less coordinator (no topics at all)."""

    def __init__(self, topics: Iterable[TopicImage] = ()) -> None:
        self._by_name: dict[str, TopicImage] = {}
        self._version = 0
        for topic in topics:
            self.put(topic)

    @property
    def version(self) -> int:
        return self._version

    def put(self, topic: TopicImage) -> None:
        """Create a topic or change its partition count."""
        self._by_name[topic.name] = topic
        self._version += 1

    def delete(self, name: str) -> None:
        self._by_name.pop(name, None)
        self._version += 1

    def by_name(self, name: str) -> TopicImage | None:
        return self._by_name.get(name)

    def by_id(self, topic_id: str) -> TopicImage | None:
        return next((t for t in self._by_name.values() if t.topic_id == topic_id), None)

    def names(self) -> Iterable[str]:
        return self._by_name.keys()
