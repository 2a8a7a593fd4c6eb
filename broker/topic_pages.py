"""DescribeTopicPartitions' pagination (KIP-966): which partitions of which topics one answer holds, and where the
next answer starts, decided as Kafka 4.4's KRaftMetadataCache.describeTopicResponse decides it.

Topics are taken in name order from the cursor's topic on. The cursor's partition index starts that topic; every
other topic starts at partition 0. Partitions are added until `limit` is used up: a topic cut short, or the first
topic that no longer fits at all, becomes the next cursor. A topic that does not exist takes no room; it is
answered with its error when the client named it, and left out when the client asked for every topic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TopicSlice:
    """One topic of the answer: `partitions` is None when the topic does not exist."""

    name: str
    partitions: range | None


@dataclass(frozen=True, slots=True)
class Page:
    topics: list[TopicSlice]
    next_cursor: tuple[str, int] | None


def page(
    names: Iterable[str],
    partition_count: Callable[[str], int | None],
    first_partition: Callable[[str], int],
    limit: int,
    *,
    skip_missing: bool,
) -> Page:
    """The page over `names` (already sorted and from the cursor's topic on); `partition_count` is None for a topic
    that does not exist; `skip_missing` when the client asked for every topic."""
    topics: list[TopicSlice] = []
    remaining = limit
    for name in names:
        if remaining <= 0:
            return Page(topics, (name, 0))
        count = partition_count(name)
        if count is None:
            if not skip_missing:
                topics.append(TopicSlice(name, None))
            continue
        start = first_partition(name)
        end = min(count, start + remaining)
        taken = range(start, end)
        topics.append(TopicSlice(name, taken))
        if end < count:
            return Page(topics, (name, end))
        remaining -= len(taken)
    return Page(topics, None)
