"""Kafka-semantic failures inside the coordinator, and the error remappings Kafka applies at its API boundary.

Validation helpers raise `GroupError(code)`; each public entry point catches it and puts the code in its response.
That is the one translation point (h11 style): nothing escapes to the broker as an exception.

The mapping functions encode the places where Kafka deliberately answers a *different* code than the one that
occurred, because older clients only retry certain codes (group-protocol.md #4, #22, #34, #39).
"""

from __future__ import annotations

from protocol.errors import ErrorCode


class GroupError(Exception):
    """A request is rejected with `code`; carried to the entry point that builds the response. `message` is the
    text Kafka puts in the responses that carry one (ConsumerGroupHeartbeat, ConsumerGroupDescribe)."""

    __slots__ = ("code", "message")

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(message or code.name)
        self.code = code
        self.message = message


_UNAVAILABLE = frozenset(
    {ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND}
)
_MOVED = frozenset({ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.KAFKA_STORAGE_ERROR})
_TOO_LARGE = frozenset({ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.INVALID_FETCH_SIZE})


def append_error_to_response(error: ErrorCode) -> ErrorCode:
    """What a request answers when its `__consumer_offsets` write failed or timed out: the one mapping for every
    coordinator write (SyncGroup, a static member's replacement, OffsetCommit, DeleteGroups, OffsetDelete), as
    Kafka 4 has it (`CoordinatorOperationExceptionHelper.handleOperationException`, and SyncGroup's own
    `appendGroupMetadataErrorToResponseError` that agrees with it).

    A timed-out write (offsets.commit.timeout.ms) is COORDINATOR_NOT_AVAILABLE; storage errors and a lost
    partition are NOT_COORDINATOR; a write too large for the log is UNKNOWN_SERVER_ERROR. The Scala coordinator
    answered differently: SyncGroup's timeout was REBALANCE_IN_PROGRESS (`storeGroup`), and OffsetCommit's
    too-large write INVALID_COMMIT_OFFSET_SIZE, its timeout passed through as REQUEST_TIMED_OUT
    (`maybeConvertOffsetCommitError`).
    """
    if error in _UNAVAILABLE or error == ErrorCode.REQUEST_TIMED_OUT:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if error in _MOVED:
        return ErrorCode.NOT_COORDINATOR
    if error in _TOO_LARGE:
        return ErrorCode.UNKNOWN_SERVER_ERROR
    return error


def offset_fetch_error(error: ErrorCode) -> ErrorCode:
    """OffsetFetch remaps failures that pre-3.9 consumers would not retry to NOT_COORDINATOR, which also makes
    them look the coordinator up again (new coordinator's `handleOffsetFetchException`, rule #39)."""
    if error in (
        ErrorCode.REQUEST_TIMED_OUT,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_ENOUGH_REPLICAS,
    ):
        return ErrorCode.NOT_COORDINATOR
    return error
