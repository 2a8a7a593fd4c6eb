"""The order Kafka answers per-partition offset APIs in (OffsetCommit, OffsetDelete).

KafkaApis answers the partitions it rejects itself (unknown topic or partition) before the coordinator sees the
request, then merges the coordinator's answers into that response by topic name (the responses' `Builder.merge`):
topics with a rejected partition come first, and within a topic the rejected partitions precede the rest. Clients
match answers by name and index, but answering in the same order keeps the two brokers comparable field by field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar


class _Topic(Protocol):
    partitions: Any


T = TypeVar("T", bound=_Topic)


def merged_by_topic(
    rejected: Iterable[tuple[str, Any]], answered: Iterable[tuple[str, Any]], topic: Callable[[str], T]
) -> list[T]:
    """Topic entries (made by ``topic(name)``) holding the rejected partitions, then the answered ones."""
    topics: dict[str, T] = {}
    for name, partition in [*rejected, *answered]:
        if name not in topics:
            topics[name] = topic(name)
        topics[name].partitions.append(partition)
    return list(topics.values())
