"""AddPartitionsToTxn (client and batched forms, VerifyOnly) and AddOffsetsToTxn: T17, T23-T27, T39."""

from __future__ import annotations

import pytest

from coordinator.hashing import partition_for
from coordinator.transactions import TransactionState as S
from protocol.errors import ErrorCode
from protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTransaction,
)
from tests.coordinator.transactions.harness import TxnTestContext

NONE = ErrorCode.NONE


@pytest.fixture
def ctx() -> TxnTestContext:
    return TxnTestContext(known_partition=lambda topic, partition: topic != "missing" and partition < 8)


def test_t25_adding_partitions_begins_the_transaction(ctx: TxnTestContext) -> None:
    producer_id, epoch = ctx.init_ok("txn")
    ctx.clock.advance(7)
    assert ctx.add_partitions("txn", producer_id, epoch, {"orders": [1, 0]}) == {
        ("orders", 0): NONE,
        ("orders", 1): NONE,
    }
    txn = ctx.txn()
    assert (txn.state, txn.partitions, txn.start_timestamp_ms) == (
        S.ONGOING,
        {("orders", 0), ("orders", 1)},
        ctx.wall_ms,
    )
    ongoing = ctx.log()[-1]
    assert ongoing is not None and ongoing.transaction_status == S.ONGOING.value
    assert [(p.topic, p.partition_ids) for p in ongoing.transaction_partitions or []] == [("orders", [0, 1])]


def test_t25_partitions_already_in_the_transaction_are_not_written_again(ctx: TxnTestContext) -> None:
    producer_id, epoch = ctx.begin("txn", {"orders": [0, 1]})
    appends = ctx.store.appends
    assert ctx.add_partitions("txn", producer_id, epoch, {"orders": [1]}) == {("orders", 1): NONE}
    assert ctx.store.appends == appends
    ctx.add_partitions("txn", producer_id, epoch, {"audit": [0]})
    assert ctx.txn().partitions == {("orders", 0), ("orders", 1), ("audit", 0)}


def test_t25_checks_in_order(ctx: TxnTestContext) -> None:
    errors = {
        "empty id": ctx.add_partitions("", 1000, 0, {"orders": [0]}),
        "unknown id": ctx.add_partitions("nobody", 1000, 0, {"orders": [0]}),
    }
    producer_id, epoch = ctx.init_ok("txn")
    errors["other producer id"] = ctx.add_partitions("txn", producer_id + 1, epoch, {"orders": [0]})
    errors["old epoch"] = ctx.add_partitions("txn", producer_id, epoch - 1, {"orders": [0]})
    assert {name: set(e.values()) for name, e in errors.items()} == {
        "empty id": {ErrorCode.INVALID_REQUEST},
        "unknown id": {ErrorCode.INVALID_PRODUCER_ID_MAPPING},
        "other producer id": {ErrorCode.INVALID_PRODUCER_ID_MAPPING},
        "old epoch": {ErrorCode.PRODUCER_FENCED},
    }


def test_t25_t32_while_the_outcome_is_being_written_adding_is_concurrent(ctx: TxnTestContext) -> None:
    producer_id, epoch = ctx.begin("txn")
    ctx.end("txn", producer_id, epoch, commit=False)
    assert set(ctx.add_partitions("txn", producer_id, epoch, {"orders": [0]}).values()) == {
        ErrorCode.CONCURRENT_TRANSACTIONS
    }
    ctx.write_markers()
    assert ctx.add_partitions("txn", producer_id, epoch, {"orders": [0]}) == {("orders", 0): NONE}
    assert ctx.state() is S.ONGOING  # from CompleteAbort: the next transaction


def test_t25_a_pending_write_makes_adding_concurrent() -> None:
    ctx = TxnTestContext(auto_durable=False)
    reply = ctx.init_reply("txn")
    ctx.store.flush()
    producer_id, epoch = reply.value.producer_id, reply.value.producer_epoch
    first = ctx.add_partitions_reply("txn", producer_id, epoch, {"orders": [0]})
    assert set(ctx.add_partitions("txn", producer_id, epoch, {"orders": [1]}).values()) == {
        ErrorCode.CONCURRENT_TRANSACTIONS
    }
    ctx.store.flush()
    assert first.value.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == 0


def test_t23_unknown_and_internal_partitions_fail_alone_and_the_rest_is_not_attempted(ctx: TxnTestContext) -> None:
    producer_id, epoch = ctx.init_ok("txn")
    result = ctx.add_partitions(
        "txn", producer_id, epoch, {"orders": [0, 9], "missing": [0], "__consumer_offsets": [1], "audit": [2]}
    )
    assert result == {
        ("orders", 0): ErrorCode.OPERATION_NOT_ATTEMPTED,
        ("orders", 9): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ("missing", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ("__consumer_offsets", 1): ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        ("audit", 2): ErrorCode.OPERATION_NOT_ATTEMPTED,
    }
    assert ctx.state() is S.EMPTY


def test_t24_the_batched_form_answers_per_transaction(ctx: TxnTestContext) -> None:
    a_id, a_epoch = ctx.init_ok("a")
    b_id, b_epoch = ctx.init_ok("b")
    request = AddPartitionsToTxnRequest(
        transactions=[
            AddPartitionsToTxnTransaction(
                transactional_id="a",
                producer_id=a_id,
                producer_epoch=a_epoch,
                topics=[AddPartitionsToTxnTopic(name="orders", partitions=[0])],
            ),
            AddPartitionsToTxnTransaction(
                transactional_id="b",
                producer_id=b_id,
                producer_epoch=b_epoch + 1,
                topics=[AddPartitionsToTxnTopic(name="orders", partitions=[1])],
            ),
        ]
    )
    response = ctx.coordinator.add_partitions_to_txn(ctx.ctx(4), request, ctx.now_ms).value
    assert response.error_code == 0 and response.results_by_topic_v3_and_below == []
    assert {
        r.transactional_id: [
            (t.name, p.partition_index, p.partition_error_code) for t in r.topic_results for p in t.results_by_partition
        ]
        for r in response.results_by_transaction
    } == {"a": [("orders", 0, 0)], "b": [("orders", 1, ErrorCode.PRODUCER_FENCED)]}
    assert ctx.state("a") is S.ONGOING and ctx.state("b") is S.EMPTY


def test_t24_the_batched_form_does_not_refuse_internal_topics(ctx: TxnTestContext) -> None:
    producer_id, epoch = ctx.init_ok("txn")
    assert ctx.add_partitions("txn", producer_id, epoch, {"__consumer_offsets": [1]}, version=4) == {
        ("__consumer_offsets", 1): NONE
    }


def verify(ctx: TxnTestContext, transactional_id: str, producer_id: int, epoch: int, *partitions: tuple[str, int]):  # type: ignore[no-untyped-def]
    topics: dict[str, list[int]] = {}
    for topic, partition in partitions:
        topics.setdefault(topic, []).append(partition)
    request = AddPartitionsToTxnRequest(
        transactions=[
            AddPartitionsToTxnTransaction(
                transactional_id=transactional_id,
                producer_id=producer_id,
                producer_epoch=epoch,
                verify_only=True,
                topics=[AddPartitionsToTxnTopic(name=t, partitions=p) for t, p in topics.items()],
            )
        ]
    )
    [result] = ctx.coordinator.add_partitions_to_txn(ctx.ctx(5), request, ctx.now_ms).value.results_by_transaction
    return {
        (t.name, p.partition_index): ErrorCode(p.partition_error_code)
        for t in result.topic_results
        for p in t.results_by_partition
    }


def test_t24_verify_only_answers_whether_each_partition_is_in_the_transaction(ctx: TxnTestContext) -> None:
    producer_id, epoch = ctx.begin("txn", {"orders": [0]})
    appends = ctx.store.appends
    assert verify(ctx, "txn", producer_id, epoch, ("orders", 0), ("orders", 1)) == {
        ("orders", 0): NONE,
        ("orders", 1): ErrorCode.TRANSACTION_ABORTABLE,
    }
    assert ctx.store.appends == appends and ctx.txn().partitions == {("orders", 0)}
    assert ctx.coordinator.verify_partitions("txn", producer_id, epoch, [("orders", 0), ("orders", 2)]) == {
        ("orders", 0): NONE,
        ("orders", 2): ErrorCode.TRANSACTION_ABORTABLE,
    }


def test_t24_verify_only_errors(ctx: TxnTestContext) -> None:
    producer_id, epoch = ctx.begin("txn", {"orders": [0]})
    tp = ("orders", 0)
    outcomes = {
        "unknown id": ctx.coordinator.verify_partitions("nobody", producer_id, epoch, [tp]),
        "empty id": ctx.coordinator.verify_partitions("", producer_id, epoch, [tp]),
        "other producer": ctx.coordinator.verify_partitions("txn", producer_id + 1, epoch, [tp]),
        "old epoch": ctx.coordinator.verify_partitions("txn", producer_id, epoch - 1, [tp]),
    }
    ctx.end("txn", producer_id, epoch, commit=True)
    outcomes["committing"] = ctx.coordinator.verify_partitions("txn", producer_id, epoch, [tp])
    assert {name: result[tp] for name, result in outcomes.items()} == {
        "unknown id": ErrorCode.INVALID_PRODUCER_ID_MAPPING,
        "empty id": ErrorCode.INVALID_REQUEST,
        "other producer": ErrorCode.INVALID_PRODUCER_ID_MAPPING,
        "old epoch": ErrorCode.PRODUCER_FENCED,
        "committing": ErrorCode.CONCURRENT_TRANSACTIONS,
    }
    ctx.write_markers()
    assert ctx.coordinator.verify_partitions("txn", producer_id, epoch, [tp]) == {tp: ErrorCode.TRANSACTION_ABORTABLE}


def test_t3_verify_answers_the_coordinators_own_errors() -> None:
    ctx = TxnTestContext(partitions=[])
    assert ctx.coordinator.verify_partitions("txn", 1, 0, [("orders", 0)]) == {("orders", 0): ErrorCode.NOT_COORDINATOR}


def test_t27_add_offsets_adds_the_groups_consumer_offsets_partition() -> None:
    ctx = TxnTestContext(offsets_topic_num_partitions=7)
    producer_id, epoch = ctx.init_ok("txn")
    assert ctx.add_offsets("txn", producer_id, epoch, "my-group") == NONE
    assert ctx.txn().partitions == {("__consumer_offsets", partition_for("my-group", 7))}
    assert ctx.state() is S.ONGOING


def test_t27_add_offsets_has_the_same_errors(ctx: TxnTestContext) -> None:
    producer_id, epoch = ctx.init_ok("txn")
    assert ctx.add_offsets("nobody", producer_id, epoch) == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert ctx.add_offsets("txn", producer_id, epoch + 1) == ErrorCode.PRODUCER_FENCED


@pytest.mark.parametrize(
    ("version", "expected"), [(1, ErrorCode.INVALID_PRODUCER_EPOCH), (2, ErrorCode.PRODUCER_FENCED)]
)
def test_t17_producer_fenced_is_invalid_producer_epoch_before_v2(
    ctx: TxnTestContext, version: int, expected: ErrorCode
) -> None:
    producer_id, epoch = ctx.init_ok("txn")
    assert set(ctx.add_partitions("txn", producer_id, epoch + 1, {"orders": [0]}, version=version).values()) == {
        expected
    }
    assert ctx.add_offsets("txn", producer_id, epoch + 1, version=version) == expected


def test_t25_kip_890_implicit_add_begins_or_extends_the_transaction(ctx: TxnTestContext) -> None:
    """The data plane's implicit add (Produce v12+, TxnOffsetCommit v5+) makes the same checks and write as
    AddPartitionsToTxn: the transaction becomes Ongoing with the partition, a partition already in it writes nothing,
    and the id's errors answer it (PRODUCER_FENCED for an old epoch)."""
    producer_id, epoch = ctx.init_ok("txn")
    added = ctx.coordinator.add_partitions("txn", producer_id, epoch, [("orders", 0)], ctx.now_ms)
    assert (added.done, added.value) == (True, NONE)
    assert (ctx.txn().state, ctx.txn().partitions) == (S.ONGOING, {("orders", 0)})
    appends = ctx.store.appends
    again = ctx.coordinator.add_partitions("txn", producer_id, epoch, [("orders", 0)], ctx.now_ms)
    assert (again.value, ctx.store.appends) == (NONE, appends)
    fenced = ctx.coordinator.add_partitions("txn", producer_id, epoch - 1, [("orders", 1)], ctx.now_ms)
    assert fenced.value == ErrorCode.PRODUCER_FENCED
    unknown = ctx.coordinator.add_partitions("nobody", producer_id, epoch, [("orders", 1)], ctx.now_ms)
    assert unknown.value == ErrorCode.INVALID_PRODUCER_ID_MAPPING
