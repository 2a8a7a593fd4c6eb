"""The failover benchmark's bookkeeping without a broker (issue #19): when a member counts as fetching again and as
answered by its new coordinator, and which clients it runs. No timing is asserted."""

from __future__ import annotations

import pytest

from bench.bench_failover import _SENT_AT, CoordinatorWatch, Progress, _wanted
from broker.context import ConnectionSession, RequestContext
from protocol.errors import ErrorCode
from protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from protocol.registry import ApiKey


def test_a_member_is_fetching_again_with_its_first_record_sent_after_the_stop() -> None:
    progress = Progress()
    progress.record(0, _SENT_AT.pack(5.0))  # before any stop: counted as consumed only
    progress.t0 = 10.0
    progress.record(0, _SENT_AT.pack(9.5))  # sent before the stop
    assert progress.consumed[0] == 2 and progress.fetching_again[0] is None
    progress.record(0, _SENT_AT.pack(10.0))
    first = progress.fetching_again[0]
    progress.record(0, _SENT_AT.pack(11.0))
    assert first is not None and progress.fetching_again[0] == first and progress.fetching_again[1] is None


def test_a_member_is_back_at_its_coordinator_when_another_node_answers_it_without_error() -> None:
    progress = Progress()
    watch = CoordinatorWatch(progress)

    def heartbeat(member: str, node: int, error: ErrorCode = ErrorCode.NONE) -> None:
        ctx = RequestContext(ConnectionSession(1, "127.0.0.1", 1, node_id=node), ApiKey.HEARTBEAT, 4, 1, "c")
        request = HeartbeatRequest(group_id="g", generation_id=1, member_id=member)
        watch.request_finished(ctx, ApiKey.HEARTBEAT, request, HeartbeatResponse(error_code=error), 0.0)

    heartbeat("m1", 2)  # before the stop: not counted
    progress.t0, progress.stopped_node = 10.0, 1
    heartbeat("m1", 1)  # the stopped node (an answer in flight as it stopped)
    heartbeat("m2", 2, ErrorCode.NOT_COORDINATOR)
    assert progress.coordinator_again == {}
    heartbeat("m1", 2)
    assert list(progress.coordinator_again) == ["m1"]


def test_the_clients_are_chosen_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BENCH_FAILOVER_CLIENTS", raising=False)
    assert _wanted() == ["aiokafka", "kafka-python", "confluent"]
    monkeypatch.setenv("BENCH_FAILOVER_CLIENTS", "confluent, aiokafka")
    assert _wanted() == ["confluent", "aiokafka"]
    monkeypatch.setenv("BENCH_FAILOVER_CLIENTS", "kafkajs")
    with pytest.raises(ValueError, match="unknown client"):
        _wanted()
