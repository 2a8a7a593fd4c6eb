"""broker/handlers/offsets_by_id.py without sockets: the two OffsetFetch v10 rules no wire test can reach on one
node (a group error hides the unknown ids; all topics leave out a topic whose offsets outlive it)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, cast

from broker.context import RequestContext
from broker.handlers.offsets_by_id import TopicIds, offset_fetch_by_id
from protocol.errors import ErrorCode
from protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopics,
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopics,
)
from storage.log_manager import LogManager

ORDERS = uuid.UUID(int=1)
GHOST = uuid.UUID(int=2)


@dataclass
class _Info:
    name: str
    topic_id: uuid.UUID


@dataclass
class _Logs:
    """The two things TopicIds reads of a LogManager."""

    infos: list[_Info] = field(default_factory=lambda: [_Info("orders", ORDERS)])
    topics_version: int = 1

    def topics(self) -> list[_Info]:
        return self.infos


@dataclass
class _Ctx:
    api_version: int = 10


def _ids() -> TopicIds:
    return TopicIds(cast(LogManager, _Logs()))


def _answer(group: OffsetFetchResponseGroup) -> Any:
    async def handler(ctx: Any, request: OffsetFetchRequest) -> OffsetFetchResponse:
        group.group_id = request.groups[0].group_id
        return OffsetFetchResponse(groups=[group])

    return handler


def _topic(name: str, offset: int) -> OffsetFetchResponseTopics:
    return OffsetFetchResponseTopics(
        name=name, partitions=[OffsetFetchResponsePartitions(partition_index=0, committed_offset=offset)]
    )


async def test_a_group_error_stands_alone_without_the_unknown_ids() -> None:
    handle = offset_fetch_by_id(_answer(OffsetFetchResponseGroup(error_code=ErrorCode.NOT_COORDINATOR)), _ids())
    wanted = [OffsetFetchRequestTopics(topic_id=GHOST, partition_indexes=[0])]
    request = OffsetFetchRequest(groups=[OffsetFetchRequestGroup(group_id="g", topics=wanted)])
    [group] = (await handle(cast(RequestContext, _Ctx()), request)).groups
    assert (group.error_code, group.topics) == (ErrorCode.NOT_COORDINATOR, [])


async def test_all_topics_by_id_leave_out_a_topic_that_no_longer_exists() -> None:
    answered = OffsetFetchResponseGroup(topics=[_topic("orders", 5), _topic("deleted", 7)])
    handle = offset_fetch_by_id(_answer(answered), _ids())
    request = OffsetFetchRequest(groups=[OffsetFetchRequestGroup(group_id="g", topics=None)])
    [group] = (await handle(cast(RequestContext, _Ctx()), request)).groups
    assert [(t.topic_id, t.partitions[0].committed_offset) for t in group.topics] == [(ORDERS, 5)]


async def test_older_versions_pass_through_by_name() -> None:
    answered = OffsetFetchResponseGroup(topics=[_topic("deleted", 7)])
    handle = offset_fetch_by_id(_answer(answered), _ids())
    request = OffsetFetchRequest(groups=[OffsetFetchRequestGroup(group_id="g", topics=None)])
    [group] = (await handle(cast(RequestContext, _Ctx(api_version=9)), request)).groups
    assert [(t.name, t.topic_id) for t in group.topics] == [("deleted", uuid.UUID(int=0))]
