"""Fault injection: answer the next requests of an API with an error, or slow an API down.

Tests of consumer-group code need the failures Kafka produces in production (a NOT_COORDINATOR in the middle of a
commit, a REBALANCE_IN_PROGRESS heartbeat, a slow JoinGroup) on demand. An injected error is answered in the shape
Kafka uses for that API's errors (`AbstractRequest.getErrorResponse`): per partition for OffsetCommit and Produce,
per group for DescribeGroups and DeleteGroups, per key for batched FindCoordinator, top level otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from protocol.errors import ErrorCode
from protocol.messages.delete_groups import DeletableGroupResult, DeleteGroupsResponse
from protocol.messages.describe_groups import DescribedGroup, DescribeGroupsResponse
from protocol.messages.find_coordinator import Coordinator, FindCoordinatorResponse
from protocol.messages.offset_commit import (
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)
from protocol.messages.produce import PartitionProduceResponse, ProduceResponse, TopicProduceResponse
from protocol.registry import APIS, ApiKey


@dataclass(slots=True)
class ErrorRule:
    api_key: int
    error: ErrorCode
    remaining: int
    group_id: str | None = None
    client_id: str | None = None

    def matches(self, api_key: int, client_id: str | None, group_id: str | None) -> bool:
        return (
            self.api_key == api_key
            and (self.client_id is None or self.client_id == client_id)
            and (self.group_id is None or self.group_id == group_id)
        )


@dataclass(slots=True)
class LatencyRule:
    api_key: int
    delay_ms: int
    remaining: int | None = None


@dataclass(slots=True)
class Faults:
    errors: list[ErrorRule] = field(default_factory=list)
    latencies: list[LatencyRule] = field(default_factory=list)

    def inject_error(
        self,
        api_key: int,
        error: int,
        count: int = 1,
        *,
        group_id: str | None = None,
        client_id: str | None = None,
    ) -> None:
        if api_key not in APIS:
            raise ValueError(f"unknown api key {api_key}")
        self.errors.append(ErrorRule(api_key, ErrorCode(error), count, group_id, client_id))

    def add_latency(self, api_key: int, delay_ms: int, count: int | None = None) -> None:
        self.latencies.append(LatencyRule(api_key, delay_ms, count))

    def clear(self) -> None:
        self.errors.clear()
        self.latencies.clear()

    def take_error(self, api_key: int, client_id: str | None, request: Any) -> ErrorCode | None:
        """The error to answer this request with, consuming one use of the first matching rule."""
        if not self.errors:
            return None
        group_id = getattr(request, "group_id", None)
        for rule in self.errors:
            if rule.matches(api_key, client_id, group_id):
                rule.remaining -= 1
                if rule.remaining <= 0:
                    self.errors.remove(rule)
                return rule.error
        return None

    def take_latency_ms(self, api_key: int) -> int:
        for rule in self.latencies:
            if rule.api_key == api_key:
                if rule.remaining is not None:
                    rule.remaining -= 1
                    if rule.remaining <= 0:
                        self.latencies.remove(rule)
                return rule.delay_ms
        return 0


def error_response(api_key: int, api_version: int, request: Any, error: ErrorCode) -> Any:
    """A response to `request` that carries `error` wherever Kafka would put it for this API and version."""
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
    spec = APIS[api_key]
    if not any(f.name == "error_code" and api_version in f.versions for f in spec.response.struct.fields):
        raise ValueError(f"{spec.key.name} v{api_version} has no top-level error code to inject")
    response = spec.response.struct.cls(error_code=error)
    if api_key == ApiKey.FIND_COORDINATOR:
        response.node_id, response.host, response.port = -1, "", -1
    return response


def error_codes(response: Any) -> list[int]:
    """Every error code in a response, top level first: what the recorder keeps for assertions."""
    found: list[int] = []
    stack = [response]
    while stack:
        item = stack.pop(0)
        code = getattr(item, "error_code", None)
        if isinstance(code, int):
            found.append(code)
        for name in getattr(item, "__slots__", ()):
            value = getattr(item, name, None)
            if isinstance(value, list):
                stack.extend(v for v in value if hasattr(v, "__slots__"))
    return found
