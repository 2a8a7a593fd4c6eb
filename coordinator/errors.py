"""Kafka-semantic failures inside the coordinator, and the error remappings Kafka applies at its API boundary.

Validation helpers raise `GroupError(code)`; each public entry point catches it and puts the code in its response.
That is the one translation point (h11 style): nothing escapes to the broker as an exception.

The mapping functions encode the places where Kafka deliberately answers a *different* code than the one that
occurred, because older clients only retry certain codes (group-protocol.md #4, #22, #34, #39).
"""

from __future__ import annotations

from protocol.errors import ErrorCode


class GroupError(Exception):
    """A request is rejected with `code`; carried to the entry point that builds the response."""

    __slots__ = ("code",)

    def __init__(self, code: ErrorCode) -> None:
        super().__init__(code.name)
        self.code = code


_UNAVAILABLE = frozenset(
    {ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND}
)
_MOVED = frozenset({ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.KAFKA_STORAGE_ERROR})
_TOO_LARGE = frozenset({ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.INVALID_FETCH_SIZE})


def _append_error(error: ErrorCode, *, timed_out: ErrorCode, too_large: ErrorCode) -> ErrorCode:
    """Kafka's shared remapping of `__consumer_offsets` append failures; APIs differ only for timeouts and sizes."""
    if error in _UNAVAILABLE:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if error in _MOVED:
        return ErrorCode.NOT_COORDINATOR
    if error == ErrorCode.REQUEST_TIMED_OUT:
        return timed_out
    if error in _TOO_LARGE:
        return too_large
    return error


def sync_append_error(error: ErrorCode) -> ErrorCode:
    """What SyncGroup answers when persisting the group's assignment failed (Kafka `storeGroup`, rule #22)."""
    return _append_error(error, timed_out=ErrorCode.REBALANCE_IN_PROGRESS, too_large=ErrorCode.UNKNOWN_SERVER_ERROR)


def admin_append_error(error: ErrorCode) -> ErrorCode:
    """What OffsetCommit, DeleteGroups and OffsetDelete answer when their records failed to write: Kafka 4's
    `CoordinatorOperationExceptionHelper.handleOperationException`. A write too large for the log is an
    UNKNOWN_SERVER_ERROR there (the old coordinator's INVALID_COMMIT_OFFSET_SIZE for OffsetCommit, rule #34, is
    gone with it), so a commit the log refused as too large gets the same code as one that cannot be serialized."""
    return _append_error(error, timed_out=ErrorCode.COORDINATOR_NOT_AVAILABLE, too_large=ErrorCode.UNKNOWN_SERVER_ERROR)


commit_append_error = admin_append_error
"""OffsetCommit's per-partition code for a failed write (rule #34 as Kafka 4 answers it)."""


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
