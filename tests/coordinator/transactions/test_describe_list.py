"""DescribeTransactions (T67), ListTransactions (T68), the id-to-partition mapping (T1), producer ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker.producer_state import ProducerIdAllocator as BrokerProducerIdAllocator
from coordinator.hashing import partition_for
from coordinator.transactions import InMemoryProducerIdAllocator, ProducerIdAllocator
from protocol.errors import ErrorCode
from tests.coordinator.transactions.harness import TxnTestContext


@pytest.fixture
def ctx() -> TxnTestContext:
    return TxnTestContext()


def test_t1_transactional_ids_hash_onto_transaction_state_like_groups_onto_offsets() -> None:
    ctx = TxnTestContext(transaction_state_log_num_partitions=50)
    for transactional_id in ("txn", "", "producer-ü-1", "a" * 100):
        assert ctx.coordinator.partition_for(transactional_id) == partition_for(transactional_id, 50)


def test_t67_describe_an_ongoing_transaction(ctx: TxnTestContext) -> None:
    ctx.clock.advance(5)
    producer_id, epoch = ctx.begin("txn", {"orders": [1, 0], "audit": [2]}, timeout_ms=30_000)
    [described] = ctx.describe("txn")
    assert described.error_code == 0
    assert (described.transactional_id, described.transaction_state) == ("txn", "Ongoing")
    assert (described.producer_id, described.producer_epoch) == (producer_id, epoch)
    assert (described.transaction_timeout_ms, described.transaction_start_time_ms) == (30_000, ctx.wall_ms)
    assert [(t.topic, t.partitions) for t in described.topics] == [("audit", [2]), ("orders", [0, 1])]


def test_t67_describe_errors_per_id(ctx: TxnTestContext) -> None:
    ctx.init_ok("idle")
    described = {d.transactional_id: d for d in ctx.describe("idle", "nobody", "")}
    assert described["idle"].error_code == 0 and described["idle"].transaction_start_time_ms == -1
    assert described["idle"].transaction_state == "Empty"
    assert described["nobody"].error_code == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
    assert described[""].error_code == ErrorCode.INVALID_REQUEST


def test_t67_describe_not_coordinator_for_an_unowned_id() -> None:
    ctx = TxnTestContext(partitions=[])
    assert ctx.describe("txn")[0].error_code == ErrorCode.NOT_COORDINATOR


def test_t68_list_filters_by_state_producer_id_and_duration(ctx: TxnTestContext) -> None:
    a_id, _ = ctx.begin("a")
    ctx.clock.advance(1_000)
    b_id, _ = ctx.begin("b")
    c_id, _ = ctx.init_ok("c")

    def listed(**kw: object) -> list[tuple[str, int, str]]:
        response = ctx.list(**kw)  # type: ignore[arg-type]
        assert response.error_code == 0
        return [(t.transactional_id, t.producer_id, t.transaction_state) for t in response.transaction_states]

    assert listed() == [("a", a_id, "Ongoing"), ("b", b_id, "Ongoing"), ("c", c_id, "Empty")]
    assert listed(states=["Ongoing"]) == [("a", a_id, "Ongoing"), ("b", b_id, "Ongoing")]
    assert listed(producer_ids=[b_id, c_id]) == [("b", b_id, "Ongoing"), ("c", c_id, "Empty")]
    assert listed(states=["Ongoing"], producer_ids=[c_id]) == []
    # Running for longer than 999 ms: "a" only; an Empty id has no start time and Kafka keeps it (now - (-1)).
    assert listed(duration_ms=999) == [("a", a_id, "Ongoing"), ("c", c_id, "Empty")]
    assert listed(duration_ms=1_000) == [("c", c_id, "Empty")]


def test_t68_unknown_state_names_are_echoed_and_filter_nothing(ctx: TxnTestContext) -> None:
    ctx.init_ok("a")
    response = ctx.list(states=["Ongoing", "Bogus"])
    assert response.unknown_state_filters == ["Bogus"] and response.transaction_states == []
    only_unknown = ctx.list(states=["Bogus"])
    assert [t.transactional_id for t in only_unknown.transaction_states] == ["a"]


def test_t68_list_v2_filters_by_a_transactional_id_pattern_matched_whole(ctx: TxnTestContext) -> None:
    """KIP-1152: ListTransactions v2's pattern is an RE2/J regular expression that must match the whole id (Kafka's
    `Matcher.matches`); null or empty filters nothing; it combines with the other filters."""
    ctx.init_ok("orders-1")
    ctx.init_ok("orders-2")
    a_id, _ = ctx.begin("payments")

    def listed(**kw: object) -> list[str]:
        response = ctx.list(**kw)  # type: ignore[arg-type]
        assert response.error_code == ErrorCode.NONE
        return [t.transactional_id for t in response.transaction_states]

    assert listed(pattern="orders-.*") == ["orders-1", "orders-2"]
    assert listed(pattern="orders") == []  # a partial match is no match
    assert listed(pattern="orders-[2-9]|pay.*") == ["orders-2", "payments"]
    assert listed(pattern=None) == listed(pattern="") == ["orders-1", "orders-2", "payments"]
    assert listed(pattern=".*s", states=["Ongoing"]) == ["payments"]
    assert listed(pattern=".*", producer_ids=[a_id]) == ["payments"]


@pytest.mark.parametrize("pattern", ["orders-[", "(unclosed", "a**", "\\C"])
def test_t68_list_v2_refuses_an_invalid_pattern(ctx: TxnTestContext, pattern: str) -> None:
    """A pattern RE2/J refuses is INVALID_REGULAR_EXPRESSION for the whole request (Kafka's InvalidRegularExpression;
    the response has no message field), with nothing listed."""
    ctx.init_ok("orders-1")
    response = ctx.list(pattern=pattern)
    assert (response.error_code, response.transaction_states) == (ErrorCode.INVALID_REGULAR_EXPRESSION, [])


def test_producer_ids_come_from_one_allocator_interface(tmp_path: Path) -> None:
    """The broker's idempotent-producer allocator and the in-memory one both satisfy the coordinator's interface."""
    assert isinstance(BrokerProducerIdAllocator(tmp_path / "producer-id-block"), ProducerIdAllocator)
    memory = InMemoryProducerIdAllocator(5)
    assert isinstance(memory, ProducerIdAllocator)
    assert [memory.allocate(), memory.allocate()] == [5, 6]
