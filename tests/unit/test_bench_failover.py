"""The failover benchmark's bookkeeping without a broker (issue #19): when a member counts as fetching again and as
answered by its new coordinator, and which clients it runs. No timing is asserted."""

from __future__ import annotations

import pytest

from bench.bench_failover import _SENT_AT, STILL_S, CoordinatorWatch, Progress, TimerAdvance, _wanted
from broker.context import ConnectionSession, RequestContext
from protocol.errors import ErrorCode
from protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from protocol.registry import ApiKey
from toolkit.frozen_wait import FrozenWait, PendingTimer


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
    assert _wanted() == ["aiokafka", "kafka-python", "confluent", "kafkajs"]
    monkeypatch.setenv("BENCH_FAILOVER_CLIENTS", "confluent, kafkajs")
    assert _wanted() == ["confluent", "kafkajs"]
    monkeypatch.setenv("BENCH_FAILOVER_CLIENTS", "sarama")
    with pytest.raises(ValueError, match="unknown client"):
        _wanted()


def frozen(fingerprint: object, exact: bool, due_in_ms: int = 3000) -> FrozenWait:
    timers = (PendingTimer("session of member m1", due_in_ms), PendingTimer("join/rebalance", due_in_ms + 1000))
    return FrozenWait("g", "PreparingRebalance", 4, timers, exact, fingerprint)


def test_a_virtual_run_advances_at_once_when_only_a_timer_can_move_the_group() -> None:
    advance = TimerAdvance()
    assert advance.due(frozen("a", exact=True), now=100.0) == 3000
    assert advance.due(None, now=100.1) is None  # time flows again, or no timer is pending
    assert advance.due(frozen("b", exact=True, due_in_ms=500), now=100.2) == 500
    assert advance.advanced_ms == 3500


def test_a_virtual_run_advances_a_group_that_stands_still_with_timers_pending() -> None:
    advance = TimerAdvance()
    assert advance.due(frozen("a", exact=False), now=100.0) is None  # members may still act: wait
    assert advance.due(frozen("a", exact=False), now=100.0 + STILL_S / 2) is None
    assert advance.due(frozen("b", exact=False), now=100.0 + STILL_S) is None  # it moved: the wait starts again
    assert advance.due(frozen("b", exact=False), now=100.0 + STILL_S * 1.5) is None
    assert advance.due(frozen("b", exact=False), now=100.0 + STILL_S * 2) == 3000
    assert advance.due(frozen("b", exact=False), now=100.0 + STILL_S * 2.1) is None  # counted from the advance
    assert advance.advanced_ms == 3000
