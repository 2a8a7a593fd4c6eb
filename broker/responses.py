"""Questions about response shapes that the connection, the metrics and the toolkit's faults all ask."""

from __future__ import annotations

import dataclasses
import functools
from collections import deque
from typing import Any

from protocol.messages.delete_groups import DeletableGroupResult, DeleteGroupsResponse
from protocol.messages.describe_groups import DescribedGroup, DescribeGroupsResponse
from protocol.messages.find_coordinator import Coordinator, FindCoordinatorResponse
from protocol.messages.metadata import MetadataResponse, MetadataResponseTopic
from protocol.messages.offset_commit import (
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)
from protocol.messages.produce import PartitionProduceResponse, ProduceResponse, TopicProduceResponse
from protocol.registry import APIS, ApiKey

JOIN_GROUP_NULLABLE_PROTOCOL_NAME = 7
_JOIN_GROUP = int(ApiKey.JOIN_GROUP)  # `as_written` runs on every answer: a plain int, not an enum lookup


def has_top_level_error_code(api_key: int, api_version: int) -> bool:
    """Whether this API's response carries a top-level `error_code` at this version (then a bad request can be
    answered with an error instead of closing the connection)."""
    return any(f.name == "error_code" and api_version in f.versions for f in APIS[api_key].response.struct.fields)


def top_level_error_response(api_key: int, error: int) -> Any:
    """A response that carries only `error` at its top level (check `has_top_level_error_code` first)."""
    return APIS[api_key].response.struct.cls(error_code=error)


def error_response(api_key: int, api_version: int, request: Any, error: int) -> Any:
    """A response to `request` that carries `error` wherever Kafka would put it for this API and version (Kafka's
    `AbstractRequest.getErrorResponse`): per partition for OffsetCommit and Produce, per topic for Metadata, per
    group for DescribeGroups and DeleteGroups, per key for batched FindCoordinator, top level otherwise. ValueError
    for a response with no place for it (the caller then closes the connection, as it would without an answer).
    Used by the toolkit's injected errors and by the SASL authenticator's ILLEGAL_SASL_STATE answers."""
    if api_key == ApiKey.OFFSET_COMMIT:
        return OffsetCommitResponse(
            topics=[
                OffsetCommitResponseTopic(
                    name=t.name,
                    partitions=[
                        OffsetCommitResponsePartition(partition_index=p.partition_index, error_code=error)
                        for p in t.partitions
                    ],
                )
                for t in request.topics
            ]
        )
    if api_key == ApiKey.PRODUCE:
        return ProduceResponse(
            responses=[
                TopicProduceResponse(
                    name=t.name,
                    partition_responses=[
                        PartitionProduceResponse(index=p.index, error_code=error) for p in t.partition_data
                    ],
                )
                for t in request.topic_data
            ]
        )
    if api_key == ApiKey.METADATA:  # a topic asked by id only is named "" (the response's name is not nullable)
        return MetadataResponse(
            topics=[
                MetadataResponseTopic(error_code=error, name=t.name or "", topic_id=t.topic_id)
                for t in request.topics or []
            ]
        )
    if api_key == ApiKey.DESCRIBE_GROUPS:
        return DescribeGroupsResponse(
            groups=[DescribedGroup(group_id=g, error_code=error, group_state="") for g in request.groups]
        )
    if api_key == ApiKey.DELETE_GROUPS:
        return DeleteGroupsResponse(
            results=[DeletableGroupResult(group_id=g, error_code=error) for g in request.groups_names]
        )
    if api_key == ApiKey.FIND_COORDINATOR and api_version >= 4:
        return FindCoordinatorResponse(
            coordinators=[
                Coordinator(key=k, node_id=-1, host="", port=-1, error_code=error) for k in request.coordinator_keys
            ]
        )
    if not has_top_level_error_code(api_key, api_version):
        raise ValueError(f"{APIS[api_key].key.name} v{api_version} has no top-level error code to inject")
    response = top_level_error_response(api_key, error)
    if api_key == ApiKey.FIND_COORDINATOR:
        response.node_id, response.host, response.port = -1, "", -1
    return response


def error_codes(response: Any) -> list[int]:
    """Every error code in a response, top level first (breadth first): what the metrics label and the recorder
    keep. Only the slots that can hold a list are looked into (`_list_slots`), once per class: an OffsetCommit
    answer's partitions are each one attribute read, not one per slot."""
    found: list[int] = []
    queue = deque((response,))
    while queue:
        item = queue.popleft()
        code = getattr(item, "error_code", None)
        if isinstance(code, int):
            found.append(code)
        for name in _list_slots(item.__class__):
            value = getattr(item, name, None)
            if isinstance(value, list):
                queue.extend(v for v in value if hasattr(v, "__slots__"))
    return found


#: Annotations of fields that may hold a list of structs; any other (int, str, bytes, a tagged-field dict...) cannot.
_MAY_HOLD_A_LIST = ("list", "List", "Sequence", "Any", "object")


@functools.cache
def _list_slots(cls: type) -> tuple[str, ...]:
    """The slots of `cls` that may hold a list: by the dataclass annotations of the generated message classes
    (`list[...]`), every slot of a class that has none."""
    slots: tuple[str, ...] = tuple(getattr(cls, "__slots__", ()))
    if not dataclasses.is_dataclass(cls):
        return slots
    annotations = {f.name: f.type for f in dataclasses.fields(cls)}
    return tuple(
        name
        for name in slots
        if not isinstance(annotations.get(name), str) or any(word in annotations[name] for word in _MAY_HOLD_A_LIST)
    )


def as_written(api_key: int, api_version: int, body: Any) -> Any:
    """``body`` with the values Kafka's response classes adjust to the version they are written at.

    Kafka's ``JoinGroupResponse`` constructor writes an empty protocol name as null from v7 (where the field became
    nullable) and a null one as "" below it, so every JoinGroup error answer carries ``protocol_name=null`` for
    modern clients. The coordinator answers in one shape for every version; this turns it into the shape of the
    version on the wire. A copy where a value changes, else ``body`` itself (a parked response may be shared).
    """
    if api_key == _JOIN_GROUP:
        nullable = api_version >= JOIN_GROUP_NULLABLE_PROTOCOL_NAME
        if nullable and body.protocol_name == "":
            return dataclasses.replace(body, protocol_name=None)
        if not nullable and body.protocol_name is None:
            return dataclasses.replace(body, protocol_name="")
    return body
