"""FindCoordinator (rules #1, #3): which broker coordinates a group, as a pure function of the cluster view.

The coordinator of group G is the leader of `__consumer_offsets` partition `partition_for(G)`; the transaction
coordinator of transactional id T the leader of `__transaction_state` partition `partition_for(T)` (T1). When the
topic does not exist yet Kafka starts creating it and answers COORDINATOR_NOT_AVAILABLE, which clients retry; that
is the well-known "coordinator not available for a few seconds after startup". A partition without a live leader gives
the same answer. v0-3 carry one key with a top-level error and node (an error goes out with node -1 and an empty
host); v4+ carry a `Coordinators` entry per key, each with its own error.

The broker supplies the cluster view (does the topic exist, who leads partition p); this module decides the
answer, so every broker node in a process answers identically.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from coordinator.hashing import partition_for
from protocol.errors import ErrorCode
from protocol.messages.find_coordinator import Coordinator, FindCoordinatorRequest, FindCoordinatorResponse

GROUP_KEY_TYPE = 0
TRANSACTION_KEY_TYPE = 1
SHARE_KEY_TYPE = 2
BATCHED_VERSION = 4

#: v0-3 answers carry Kafka's `Errors.message()`: the error's name on success ("NONE"), else its exception text.
_MESSAGES = {
    ErrorCode.NONE: "NONE",
    ErrorCode.COORDINATOR_NOT_AVAILABLE: "The coordinator is not available.",
    ErrorCode.INVALID_REQUEST: "Unknown coordinator key type.",
}


@dataclass(frozen=True, slots=True)
class Node:
    """A broker endpoint as FindCoordinator reports it."""

    node_id: int
    host: str
    port: int


NO_NODE = Node(-1, "", -1)


class Endpoint(Protocol):
    """Any node type with an id and an address (the broker's cluster view has its own `Node`)."""

    @property
    def node_id(self) -> int: ...

    @property
    def host(self) -> str: ...

    @property
    def port(self) -> int: ...


@dataclass(frozen=True, slots=True)
class CoordinatorTopic:
    """Where the coordinators of one key type live: a group's in `__consumer_offsets`, a transactional id's in
    `__transaction_state` (T1), each key on partition `partition_for(key, num_partitions)`."""

    num_partitions: int
    exists: bool
    leader_of: Callable[[int], Endpoint | None]
    create: Callable[[], None] | None = None
    """Kafka's auto-creation of the topic on the first lookup while it is missing."""


def find_coordinator(
    request: FindCoordinatorRequest,
    api_version: int,
    topics: Mapping[int, CoordinatorTopic],
) -> FindCoordinatorResponse:
    """Answer a FindCoordinator request from the coordinator topic of each key type served (`topics`, by key
    type); a known key type that is not served (share groups) is COORDINATOR_NOT_AVAILABLE, an unknown one
    INVALID_REQUEST. A missing topic is created once (`CoordinatorTopic.create`) and answered
    COORDINATOR_NOT_AVAILABLE, which clients retry."""
    keys = list(request.coordinator_keys) if api_version >= BATCHED_VERSION else [request.key]
    answers: list[tuple[str, ErrorCode, Endpoint]] = []
    asked_to_create = False
    topic = topics.get(request.key_type)
    for key in keys:
        if topic is None:
            known = request.key_type in (GROUP_KEY_TYPE, TRANSACTION_KEY_TYPE, SHARE_KEY_TYPE)
            answers.append((key, ErrorCode.COORDINATOR_NOT_AVAILABLE if known else ErrorCode.INVALID_REQUEST, NO_NODE))
            continue
        if not topic.exists:
            if topic.create is not None and not asked_to_create:
                topic.create()
                asked_to_create = True
            answers.append((key, ErrorCode.COORDINATOR_NOT_AVAILABLE, NO_NODE))
            continue
        leader = topic.leader_of(partition_for(key, topic.num_partitions))
        if leader is None:
            answers.append((key, ErrorCode.COORDINATOR_NOT_AVAILABLE, NO_NODE))
        else:
            answers.append((key, ErrorCode.NONE, leader))

    if api_version >= BATCHED_VERSION:
        return FindCoordinatorResponse(
            coordinators=[
                Coordinator(
                    key=key,
                    node_id=node.node_id,
                    host=node.host,
                    port=node.port,
                    error_code=error,
                    # Kafka sets no message on a per-key answer (only a failed request's carries one).
                    error_message=_MESSAGES[error] if error == ErrorCode.INVALID_REQUEST else "",
                )
                for key, error, node in answers
            ]
        )
    _, error, node = answers[0]
    return FindCoordinatorResponse(
        error_code=error, error_message=_MESSAGES.get(error), node_id=node.node_id, host=node.host, port=node.port
    )
