"""The coordinator runtime: the only place that appends records, waits for them, times them out, maps errors.

Kafka's `CoordinatorRuntime` runs a manager's operation, appends the records of its `CoordinatorResult`, completes
the response when they are committed, fails it after the write timeout (`offsets.commit.timeout.ms`), and the
service maps the failure to what the request answers (`CoordinatorOperationExceptionHelper`). This is that runtime
for a sans-IO coordinator: it owns the in-flight appends and their timeout keys on the shared timer; no manager
holds a write token or a write deadline.

Order of events for one write: the records go to `RecordLog.append`; the first of (durability notice, failure
notice, timeout, the partition being unloaded) wins; the error is mapped once (`append_error_to_response`) and
logged when it is one; the result's `on_append` runs with the mapped code; then its response is released. A
durability notice that arrives after the timeout is ignored, as Kafka ignores a produce completing after its
timeout.

The runtime does not look inside the records, so it is generic in their type: the group coordinator's runtime
writes `CoordinatorRecord`s to `__consumer_offsets`, the transaction coordinator's (its sibling, Decision 7) writes
transaction-log records to `__transaction_state`. A result with a producer is appended as that producer's
transactional batch, one with a marker as the transaction's control batch (`RecordLog.append_marker`); both follow
the same order of events.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic

from typing_extensions import TypeVar

from coordinator.errors import append_error_to_response
from coordinator.events import Events
from coordinator.keys import append_key
from coordinator.persistence import RecordLog
from coordinator.records import CoordinatorRecord
from coordinator.reply import Reply
from coordinator.result import AppendOutcome, CoordinatorResult
from coordinator.time_register import TimeRegister
from coordinator.timer import Timer
from protocol.errors import ErrorCode

T = TypeVar("T")
R = TypeVar("R", default=CoordinatorRecord)


@dataclass(slots=True)
class _InflightAppend:
    partition: int
    purpose: str
    on_done: AppendOutcome


def _ignore(_error: ErrorCode) -> None:
    return None


class CoordinatorRuntime(Generic[R]):
    """Writes `CoordinatorResult`s to the record log and releases their responses."""

    __slots__ = ("_events", "_inflight", "_next_token", "_store", "_time", "_timeout_ms", "_timer")

    def __init__(self, store: RecordLog[R], timer: Timer, time: TimeRegister, timeout_ms: int, events: Events) -> None:
        self._store = store
        self._timer = timer
        self._time = time
        self._timeout_ms = timeout_ms
        self._events = events
        self._inflight: dict[int, _InflightAppend] = {}
        self._next_token = 0

    def write(self, result: CoordinatorResult[T, R]) -> Reply[T]:
        """Append the result's records (if any) and return the reply its response is released through."""
        response = result.response
        on_append = result.on_append or _ignore
        if isinstance(response, Reply):
            reply: Reply[T] = response
            done = on_append
        else:
            if not result.writes:
                on_append(ErrorCode.NONE)
                return Reply.completed(response)
            reply = Reply()
            value: T = response

            def done(error: ErrorCode) -> None:
                on_append(error)
                reply.complete(value)

        if result.writes:
            self._append(result, done)
        else:
            done(ErrorCode.NONE)
        return reply

    def write_all(self, results: Sequence[CoordinatorResult[None, R]], response: T) -> Reply[T]:
        """Write several results (one per partition, e.g. DeleteGroups) and answer `response` when all are done."""
        reply: Reply[T] = Reply()
        outstanding = [len(results)]

        def one_done(_reply_value: None) -> None:
            outstanding[0] -= 1
            if outstanding[0] == 0:
                reply.complete(response)

        if not results:
            reply.complete(response)
        for result in results:
            self.write(result).on_complete(one_done)
        return reply

    def fail_partition(self, partition: int, error: ErrorCode) -> None:
        """The partition was unloaded: its in-flight writes fail with `error` (NOT_LEADER_OR_FOLLOWER)."""
        for token in [t for t, a in self._inflight.items() if a.partition == partition]:
            self._finish(token, error)

    def _append(self, result: CoordinatorResult[Any, R], on_done: AppendOutcome) -> None:
        token = self._next_token
        self._next_token += 1
        partition = result.partition
        self._inflight[token] = _InflightAppend(partition, result.purpose, on_done)

        def durable(error: ErrorCode) -> None:
            self._finish(token, error)

        if result.marker is not None:
            self._store.append_marker(partition, result.marker, durable)
        elif result.producer is not None:
            self._store.append(partition, result.records, durable, result.producer)
        else:
            self._store.append(partition, result.records, durable)
        if token in self._inflight:  # an in-memory log may have answered inside `append`
            self._timer.schedule(
                append_key(token),
                self._time.now_ms + self._timeout_ms,
                lambda: self._finish(token, ErrorCode.REQUEST_TIMED_OUT),
            )

    def _finish(self, token: int, error: ErrorCode) -> None:
        inflight = self._inflight.pop(token, None)
        if inflight is None:
            return
        self._timer.cancel(append_key(token))
        if error != ErrorCode.NONE:
            self._events.append_failed(inflight.partition, inflight.purpose, error.name)
            error = append_error_to_response(error)
        inflight.on_done(error)
