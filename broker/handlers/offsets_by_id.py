"""The offset APIs' topic-id versions at the broker edge (OffsetCommit v10, OffsetFetch v10, TxnOffsetCommit v6).

Those versions name topics by id only (KIP-848, KIP-1319). The group coordinator keeps offsets by topic name, as
Kafka's does, so ids are resolved here, before it is asked, and put back on its answer, as Kafka's KafkaApis does:

- a topic whose id this broker does not know is answered UNKNOWN_TOPIC_ID for each of its partitions and never
  reaches the coordinator (commits: those topics come first in the answer; OffsetFetch: after the group's topics,
  and not at all when the group itself has an error);
- an OffsetFetch of all a group's topics names each by its id, and leaves out those that no longer have one (a
  deleted topic's offsets).

Older versions pass through untouched.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, Protocol

from broker.context import RequestContext
from broker.handlers.bridge import Handler
from protocol.errors import ErrorCode
from protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)
from protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestTopics,
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopics,
)
from protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
    TxnOffsetCommitResponsePartition,
    TxnOffsetCommitResponseTopic,
)
from storage.log_manager import LogManager

#: The id of no topic (what a topic that no longer exists has).
NO_TOPIC_ID = uuid.UUID(int=0)
#: The first version of each API that names topics by id.
OFFSET_COMMIT_TOPIC_IDS = 10
OFFSET_FETCH_TOPIC_IDS = 10
TXN_OFFSET_COMMIT_TOPIC_IDS = 6


class TopicIds:
    """Topic names by id and ids by name, over the log manager (rebuilt only when its topics changed)."""

    def __init__(self, logs: LogManager) -> None:
        self._logs = logs
        self._version = -1
        self._names: dict[uuid.UUID, str] = {}
        self._ids: dict[str, uuid.UUID] = {}

    def _refresh(self) -> None:
        if self._version != self._logs.topics_version:
            infos = self._logs.topics()
            self._names = {info.topic_id: info.name for info in infos}
            self._ids = {info.name: info.topic_id for info in infos}
            self._version = self._logs.topics_version

    def name(self, topic_id: uuid.UUID) -> str | None:
        self._refresh()
        return self._names.get(topic_id)

    def id(self, name: str) -> uuid.UUID:
        """The topic's id; the zero id for a topic that does not exist (any more)."""
        self._refresh()
        return self._ids.get(name, NO_TOPIC_ID)


class _Topic(Protocol):
    name: str
    topic_id: uuid.UUID
    partitions: Any


def _resolve(topics: list[Any], ids: TopicIds) -> tuple[list[Any], list[Any]]:
    """Name each request topic by its id: (the known topics, now named; the unknown ones)."""
    known, unknown = [], []
    for topic in topics:
        name = ids.name(topic.topic_id)
        if name is None:
            unknown.append(topic)
        else:
            topic.name = name
            known.append(topic)
    return known, unknown


def _name_ids(topics: list[Any], by_name: dict[str, uuid.UUID]) -> None:
    """Put the request's ids back on the coordinator's answer, which names topics."""
    for topic in topics:
        topic.topic_id = by_name.get(topic.name, topic.topic_id)


def offset_commit_by_id(handler: Handler, ids: TopicIds) -> Handler:
    """OffsetCommit v10 (see the module docstring)."""
    unknown = _unknown_topic(OffsetCommitResponseTopic, OffsetCommitResponsePartition)
    return _commit_by_id(handler, ids, OFFSET_COMMIT_TOPIC_IDS, OffsetCommitResponse, unknown)


def txn_offset_commit_by_id(handler: Handler, ids: TopicIds) -> Handler:
    """TxnOffsetCommit v6 (see the module docstring)."""
    unknown = _unknown_topic(TxnOffsetCommitResponseTopic, TxnOffsetCommitResponsePartition)
    return _commit_by_id(handler, ids, TXN_OFFSET_COMMIT_TOPIC_IDS, TxnOffsetCommitResponse, unknown)


def _unknown_topic(topic_type: Callable[..., Any], partition_type: Callable[..., Any]) -> Callable[[_Topic], Any]:
    """A commit answer's topic for a request topic whose id is unknown: UNKNOWN_TOPIC_ID for each partition."""

    def answer(topic: _Topic) -> Any:
        partitions = [
            partition_type(partition_index=p.partition_index, error_code=ErrorCode.UNKNOWN_TOPIC_ID)
            for p in topic.partitions
        ]
        return topic_type(topic_id=topic.topic_id, partitions=partitions)

    return answer


def _commit_by_id(
    handler: Handler,
    ids: TopicIds,
    since: int,
    response_type: Callable[..., Any],
    unknown_topic: Callable[[_Topic], Any],
) -> Handler:
    async def handle(ctx: RequestContext, request: OffsetCommitRequest | TxnOffsetCommitRequest) -> Any:
        if ctx.api_version < since:
            return await handler(ctx, request)
        known, unknown = _resolve(request.topics, ids)
        unknown_topics = [unknown_topic(topic) for topic in unknown]
        if not known:
            return response_type(topics=unknown_topics)
        by_name = {topic.name: topic.topic_id for topic in known}
        request.topics = known
        response = await handler(ctx, request)
        _name_ids(response.topics, by_name)
        response.topics[:0] = unknown_topics
        return response

    return handle


def offset_fetch_by_id(handler: Handler, ids: TopicIds) -> Handler:
    """OffsetFetch v10 (see the module docstring)."""

    async def handle(ctx: RequestContext, request: OffsetFetchRequest) -> OffsetFetchResponse:
        if ctx.api_version < OFFSET_FETCH_TOPIC_IDS:
            response: OffsetFetchResponse = await handler(ctx, request)
            return response
        unknown_by_group: dict[str, list[OffsetFetchRequestTopics]] = {}
        by_name: dict[str, uuid.UUID] = {}
        for group in request.groups:
            if group.topics is not None:
                group.topics, unknown_by_group[group.group_id] = _resolve(group.topics, ids)
                by_name.update((topic.name, topic.topic_id) for topic in group.topics)
        response = await handler(ctx, request)
        for answered in response.groups:
            if answered.group_id not in unknown_by_group:
                _all_topics_by_id(answered, ids)
            elif answered.error_code == ErrorCode.NONE:
                _name_ids(answered.topics, by_name)
                answered.topics.extend(_fetch_topic(topic) for topic in unknown_by_group[answered.group_id])
        return response

    return handle


def _all_topics_by_id(group: OffsetFetchResponseGroup, ids: TopicIds) -> None:
    """All of a group's topics, each by its current id; a topic without one (deleted) is left out."""
    for topic in group.topics:
        topic.topic_id = ids.id(topic.name)
    group.topics = [topic for topic in group.topics if topic.topic_id != NO_TOPIC_ID]


def _fetch_topic(topic: OffsetFetchRequestTopics) -> OffsetFetchResponseTopics:
    return OffsetFetchResponseTopics(
        topic_id=topic.topic_id,
        partitions=[
            OffsetFetchResponsePartitions(
                partition_index=index,
                committed_offset=-1,
                committed_leader_epoch=-1,
                metadata="",
                error_code=ErrorCode.UNKNOWN_TOPIC_ID,
            )
            for index in topic.partition_indexes
        ],
    )
