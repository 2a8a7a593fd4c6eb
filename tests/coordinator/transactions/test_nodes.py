"""Several nodes sharing one transaction coordinator (issue #19): the per-node gate of the client-facing APIs,
ListTransactions per node, the broker's own calls ungated, and a `__transaction_state` partition moving to another
node with a transaction in each state (T3, T53, T55)."""

from __future__ import annotations

import pytest

from coordinator.transactions import TransactionState as S
from protocol.errors import ErrorCode
from protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTransaction,
)
from tests.coordinator.transactions.harness import TxnTestContext

NONE = ErrorCode.NONE
NOT_COORDINATOR = ErrorCode.NOT_COORDINATOR


class Nodes:
    """Which node leads each `__transaction_state` partition, and which node the next request comes to."""

    def __init__(self, leaders: dict[int, str], asking: str = "a") -> None:
        self.leaders = leaders
        self.asking = asking

    def serves(self, partition: int) -> bool:
        return self.leaders.get(partition) == self.asking


def ids_in_two_partitions(ctx: TxnTestContext) -> tuple[str, str]:
    """A transactional id of partition 0 (node a's) and one of partition 1 (node b's)."""
    by_partition: dict[int, str] = {}
    for n in range(100):
        by_partition.setdefault(ctx.coordinator.partition_for(f"txn-{n}"), f"txn-{n}")
    return by_partition[0], by_partition[1]


@pytest.fixture
def nodes() -> Nodes:
    return Nodes({0: "a", 1: "b", 2: "a", 3: "b"})


@pytest.fixture
def ctx(nodes: Nodes) -> TxnTestContext:
    return TxnTestContext(serves=nodes.serves)


def batched(*transactions: tuple[str, int, int], verify_only: bool = False) -> AddPartitionsToTxnRequest:
    return AddPartitionsToTxnRequest(
        transactions=[
            AddPartitionsToTxnTransaction(
                transactional_id=transactional_id,
                producer_id=producer_id,
                producer_epoch=epoch,
                verify_only=verify_only,
                topics=[AddPartitionsToTxnTopic(name="orders", partitions=[0, 1])],
            )
            for transactional_id, producer_id, epoch in transactions
        ]
    )


def test_each_client_api_answers_not_coordinator_for_an_id_another_node_leads(
    ctx: TxnTestContext, nodes: Nodes
) -> None:
    here, there = ids_in_two_partitions(ctx)
    nodes.asking = "b"
    there_producer = ctx.begin(there, {"orders": [0]})
    nodes.asking = "a"
    here_producer = ctx.begin(here, {"orders": [0]})
    # InitProducerId: only a transactional id is the coordinator's; the checks Kafka makes first come first.
    assert ErrorCode(ctx.init(there).error_code) == NOT_COORDINATOR
    assert ErrorCode(ctx.init(None).error_code) == NONE  # an idempotent producer's id: any node allocates it
    assert ErrorCode(ctx.init("").error_code) == ErrorCode.INVALID_REQUEST
    assert ErrorCode(ctx.init(there, timeout_ms=0).error_code) == ErrorCode.INVALID_TRANSACTION_TIMEOUT
    # AddPartitionsToTxn v0-3: every partition of the transaction; the pre-checks still come before.
    assert ctx.add_partitions(there, *there_producer, {"orders": [1, 2]}) == {
        ("orders", 1): NOT_COORDINATOR,
        ("orders", 2): NOT_COORDINATOR,
    }
    assert ctx.add_partitions(there, *there_producer, {"__consumer_offsets": [0], "orders": [1]}) == {
        ("__consumer_offsets", 0): ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        ("orders", 1): ErrorCode.OPERATION_NOT_ATTEMPTED,
    }
    # AddPartitionsToTxn v4+: per transaction of the batch, adding (then verifying what was added).
    for verify_only in (False, True):
        request = batched((here, *here_producer), (there, *there_producer), verify_only=verify_only)
        response = ctx.coordinator.add_partitions_to_txn(ctx.ctx(5), request, ctx.now_ms).value
        assert {
            r.transactional_id: {p.partition_error_code for t in r.topic_results for p in t.results_by_partition}
            for r in response.results_by_transaction
        } == {here: {NONE}, there: {NOT_COORDINATOR}}
    assert ctx.add_offsets(there, *there_producer) == NOT_COORDINATOR
    assert ctx.end(there, *there_producer, commit=True) == NOT_COORDINATOR
    assert ctx.end(there, *there_producer, commit=False, version=5) == NOT_COORDINATOR
    assert [d.error_code for d in ctx.describe(here, there)] == [NONE, NOT_COORDINATOR]
    # Nothing reached the other node's transaction, which its own node still serves.
    assert (ctx.state(there), ctx.txn(there).partitions) == (S.ONGOING, {("orders", 0)})
    nodes.asking = "b"
    assert ctx.end(there, *there_producer, commit=True) == NONE
    # Shut down, every node says so before anything else (Kafka's order).
    ctx.coordinator.shutdown(ctx.now_ms)
    assert ErrorCode(ctx.init(here).error_code) == ErrorCode.COORDINATOR_NOT_AVAILABLE


def test_list_transactions_lists_the_asking_nodes_partitions_and_counts_only_their_loading(
    ctx: TxnTestContext, nodes: Nodes
) -> None:
    here, there = ids_in_two_partitions(ctx)
    for node, transactional_id in (("a", here), ("b", there)):
        nodes.asking = node
        ctx.begin(transactional_id)
    assert [t.transactional_id for t in ctx.list().transaction_states] == [there]
    nodes.asking = "a"
    assert [t.transactional_id for t in ctx.list().transaction_states] == [here]
    ctx.coordinator.unload_partition(1, ctx.now_ms)
    ctx.coordinator.begin_loading(1)  # node b's partition loads: node a still lists its own
    assert (ctx.list().error_code, len(ctx.list().transaction_states)) == (NONE, 1)
    nodes.asking = "b"
    assert ctx.list().error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS


def test_the_brokers_own_calls_are_made_for_whichever_node_and_never_gated(ctx: TxnTestContext, nodes: Nodes) -> None:
    # A partition leader verifying or adding (KIP-890) for a producer, markers, timeouts and expiration all run
    # while the request being served came to a node that leads none of the id's partition.
    ctx = TxnTestContext(
        serves=nodes.serves,
        abort_timed_out_transactions_interval_ms=1_000,
        transactional_id_expiration_ms=60_000,
        remove_expired_transactional_ids_interval_ms=1_000,
    )
    _, there = ids_in_two_partitions(ctx)
    nodes.asking = "b"
    producer_id, epoch = ctx.begin(there, {"orders": [0]}, timeout_ms=5_000)
    nodes.asking = "a"
    assert ctx.coordinator.verify_partitions(there, producer_id, epoch, [("orders", 0)]) == {("orders", 0): NONE}
    added = ctx.coordinator.add_partitions(there, producer_id, epoch, [("orders", 1)], ctx.now_ms)
    assert added.value == NONE and ctx.txn(there).partitions == {("orders", 0), ("orders", 1)}
    ctx.sleep(6_000)  # the timeout scan aborts it, whichever node a request last came to
    assert ctx.state(there) is S.PREPARE_ABORT
    ctx.write_markers()
    assert ctx.state(there) is S.COMPLETE_ABORT
    ctx.sleep(61_000)
    assert ctx.coordinator.transaction(there) is None and ctx.logged_states(there)[-1] == "tombstone"


# -- a `__transaction_state` partition moving to another node --------------------------------------------------


def move(ctx: TxnTestContext, nodes: Nodes, partition: int, to: str, coordinator_epoch: int) -> None:
    """What the broker does when the partition's leadership moves: unload, then load from the shared log."""
    ctx.coordinator.unload_partition(partition, ctx.now_ms, ctx.wall_ms)
    nodes.leaders[partition] = to
    ctx.coordinator.begin_loading(partition)
    records = ctx.store.records(partition)
    assert ctx.coordinator.load_partition(partition, records, ctx.now_ms, ctx.wall_ms, coordinator_epoch)


def test_an_ongoing_transaction_continues_on_the_new_coordinator_and_commits(ctx: TxnTestContext, nodes: Nodes) -> None:
    here, _ = ids_in_two_partitions(ctx)
    producer_id, epoch = ctx.begin(here, {"orders": [0]})
    move(ctx, nodes, 0, "b", coordinator_epoch=1)
    assert ctx.add_partitions(here, producer_id, epoch, {"orders": [1]}) == {("orders", 1): NOT_COORDINATOR}
    nodes.asking = "b"  # the producer finds its new coordinator (FindCoordinator) and carries on
    assert ctx.add_partitions(here, producer_id, epoch, {"orders": [1]}) == {("orders", 1): NONE}
    assert ctx.end(here, producer_id, epoch, commit=True) == NONE
    [markers] = ctx.sink.outstanding
    assert (markers.committed, markers.partitions, markers.coordinator_epoch) == (
        True,
        (("orders", 0), ("orders", 1)),
        1,
    )
    ctx.write_markers()
    assert ctx.state(here) is S.COMPLETE_COMMIT


@pytest.mark.parametrize("commit", [True, False])
def test_a_decided_transaction_is_completed_by_the_new_coordinator_on_load(
    ctx: TxnTestContext, nodes: Nodes, commit: bool
) -> None:
    here, _ = ids_in_two_partitions(ctx)
    producer_id, epoch = ctx.begin(here, {"orders": [0]})
    assert ctx.end(here, producer_id, epoch, commit=commit) == NONE
    ctx.sink.outstanding.clear()  # the old node's markers never got written
    move(ctx, nodes, 0, "b", coordinator_epoch=1)
    [markers] = ctx.sink.outstanding
    assert (markers.committed, markers.partitions, markers.coordinator_epoch) == (commit, (("orders", 0),), 1)
    nodes.asking = "b"
    # The producer's retry meanwhile is told to wait, as Kafka's is, then finds the outcome it asked for.
    assert ctx.end(here, producer_id, epoch, commit=commit) == ErrorCode.CONCURRENT_TRANSACTIONS
    ctx.write_markers()
    assert ctx.state(here) is (S.COMPLETE_COMMIT if commit else S.COMPLETE_ABORT)
    assert ctx.end(here, producer_id, epoch, commit=commit) == NONE
    assert ctx.logged_states(here)[-2:] == ["PrepareCommit" if commit else "PrepareAbort", ctx.state(here).state_name]


def test_an_end_txn_whose_write_was_in_flight_when_the_partition_moved_is_retried_on_the_new_node(
    nodes: Nodes,
) -> None:
    ctx = TxnTestContext(serves=nodes.serves, auto_durable=False)
    here, _ = ids_in_two_partitions(ctx)
    init = ctx.init_reply(here)
    ctx.store.flush()
    producer_id, epoch = init.value.producer_id, init.value.producer_epoch
    added = ctx.add_partitions_reply(here, producer_id, epoch, {"orders": [0]})
    ctx.store.flush()
    assert added.done
    end = ctx.end_reply(here, producer_id, epoch, commit=True)
    ctx.coordinator.unload_partition(0, ctx.now_ms)  # the node stops with PrepareCommit being written
    assert ErrorCode(end.value.error_code) == NOT_COORDINATOR
    ctx.store.flush()  # ... which the replicas hold: the new leader finds it
    nodes.leaders[0], nodes.asking = "b", "b"
    ctx.coordinator.begin_loading(0)
    ctx.coordinator.load_partition(0, ctx.store.records(0), ctx.now_ms, ctx.wall_ms, 1)
    assert ctx.state(here) is S.PREPARE_COMMIT
    ctx.write_markers()
    ctx.store.flush()
    retry = ctx.end_reply(here, producer_id, epoch, commit=True)
    assert (ErrorCode(retry.value.error_code), ctx.state(here)) == (NONE, S.COMPLETE_COMMIT)
