"""confluent-kafka (librdkafka) on a three-node cluster whose coordinator nodes stop, start and move (issue #19):
transactions and KIP-848 consumer groups come through as they do against Kafka.

Transactions, one producer through three coordinator moves: Ongoing when its node stops (the producer finds the new
coordinator and commits); PrepareCommit when its node stops (the commit was answered, its markers held back by a
marker fault: the new coordinator loads the decision from `__transaction_state` and completes it by writing them);
Ongoing when moved on purpose with the old node running (it answers the producer's EndTxn NOT_COORDINATOR, the
producer commits on the new one). A read_committed reader then sees every committed record once, and none of an
aborted transaction's.

A `group.protocol=consumer` group: the coordinator's node stops in steady state and starts again; then it stops
while a third member joins, before the others gave
up the partitions it gets (their next ConsumerGroupHeartbeat finds the connection gone, they ask FindCoordinator
again, and the node that loaded the group from `__consumer_offsets` finishes the rebalance), then starts again and
gets the group back by a move in steady state, its successor answering the members' heartbeats NOT_COORDINATOR
until they find it. Nothing is lost or consumed twice, and a new member resumes at the committed offsets.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from coordinator.hashing import partition_for
from tests.e2e.confluent_client import (
    TIMEOUT_S,
    ConfluentAdapter,
    ConfluentConsumer,
    ConfluentTxnAdapter,
    produce_acked,
    transactional_producer,
)
from tests.e2e.scenario import Opened, Pump, Rec, assert_nothing_lost, end_offsets, keyed, settled
from tests.e2e.txn_scenario import assert_read_exactly, read_to_sentinels, sentinels
from toolkit.handle import GroupBrokerHandle
from toolkit.recorder import Exchange

pytestmark = pytest.mark.integration

TOPIC = "orders"
PARTITIONS = 4
TXN_STATE_PARTITIONS = 6
TRANSACTIONAL_ID = "orders-writer"
GROUP = "billing"
CONSUMER_PROTOCOL = {"group.protocol": "consumer"}
NOT_COORDINATOR = 16


@pytest.fixture
def group_broker_config() -> dict[str, str]:
    return {
        "cluster.nodes": "3",
        "offsets.topic.num.partitions": "6",
        "transaction.state.log.num.partitions": str(TXN_STATE_PARTITIONS),
        "group.consumer.heartbeat.interval.ms": "500",
        "group.consumer.min.heartbeat.interval.ms": "500",
    }


@pytest.fixture
def adapter(group_broker: GroupBrokerHandle) -> Iterator[ConfluentTxnAdapter]:
    """Producer, admin and readers, with `TOPIC` created with three replicas (a stopped node leaves two)."""
    client = ConfluentTxnAdapter(group_broker.bootstrap_servers)
    client.create_topic(TOPIC, PARTITIONS, replicas=3)
    yield client
    client.close()


# -- transactions ------------------------------------------------------------------------------------------------


def batch(name: str, count: int) -> list[tuple[str, str]]:
    return [(f"{name}-{i}", f"{name}-{i}") for i in range(count)]


def test_a_commit_survives_its_coordinators_node_stopping_while_ongoing_and_while_committing(
    group_broker: GroupBrokerHandle, adapter: ConfluentTxnAdapter
) -> None:
    coordinator_partition = partition_for(TRANSACTIONAL_ID, TXN_STATE_PARTITIONS)
    group_broker.move_leader("__transaction_state", coordinator_partition, 2)  # node 2 coordinates the id
    assert group_broker.transaction_coordinator_node(TRANSACTIONAL_ID) == 2
    producer = transactional_producer(group_broker.bootstrap_servers, TRANSACTIONAL_ID)
    committed: list[Rec] = []
    try:
        # Ongoing when node 2 stops: the producer carries on against node 1 or 3 and commits.
        producer.begin_transaction()
        committed += produce_acked(producer, TOPIC, batch("before-stop", 6))
        assert group_broker.transaction(TRANSACTIONAL_ID)["state"] == "Ongoing"
        group_broker.stop_node(2)
        committed += produce_acked(producer, TOPIC, batch("after-stop", 6))
        producer.commit_transaction(TIMEOUT_S)
        group_broker.wait_for_transaction_blocking(TRANSACTIONAL_ID, state="CompleteCommit")

        # PrepareCommit when its node stops: node 2 is back and coordinates again; the commit is answered, its
        # markers are held, the node stops, and its successor writes them on load.
        group_broker.start_node(2)
        group_broker.move_leader("__transaction_state", coordinator_partition, 2)
        group_broker.delay_markers(600_000, 1, transactional_id=TRANSACTIONAL_ID)
        producer.begin_transaction()
        committed += produce_acked(producer, TOPIC, batch("deciding", 6))
        producer.commit_transaction(TIMEOUT_S)
        assert group_broker.transaction(TRANSACTIONAL_ID)["state"] == "PrepareCommit"
        group_broker.stop_node(2)
        group_broker.wait_for_transaction_blocking(TRANSACTIONAL_ID, state="CompleteCommit")

        # Moved while Ongoing, both nodes running: the old one refuses the EndTxn, the producer asks the new one.
        group_broker.start_node(2)
        group_broker.move_leader("__transaction_state", coordinator_partition, 2)
        producer.begin_transaction()
        committed += produce_acked(producer, TOPIC, batch("moved", 6))
        group_broker.move_leader("__transaction_state", coordinator_partition, 3)
        producer.commit_transaction(TIMEOUT_S)
        end_txn_errors = [e.error_codes for e in group_broker.requests(api="EndTxn")]
        assert end_txn_errors[-2:] == [(NOT_COORDINATOR,), (0,)]
        group_broker.wait_for_transaction_blocking(TRANSACTIONAL_ID, state="CompleteCommit")

        # An aborted transaction afterwards: what read_committed must leave out.
        producer.begin_transaction()
        produce_acked(producer, TOPIC, batch("aborted", 6))
        producer.abort_transaction(TIMEOUT_S)
    finally:
        del producer  # no close(): dropping the last reference destroys the handle now
    ends = sentinels(adapter, TOPIC, PARTITIONS)
    received = read_to_sentinels(adapter, TOPIC, ends, read_committed=True, name="committed-reader")
    assert_read_exactly(received, committed + ends, "a read_committed reader")


# -- a KIP-848 consumer group -------------------------------------------------------------------------------------


def member(adapter: ConfluentAdapter, name: str) -> ConfluentConsumer:
    """A consumer-protocol member that commits what it consumed from the partitions it gives up."""
    return adapter.consumer(GROUP, TOPIC, name, commit_on_revoke=True, **CONSUMER_PROTOCOL)


def test_a_consumer_group_keeps_consuming_while_its_coordinators_node_stops_and_starts(
    group_broker: GroupBrokerHandle, adapter: ConfluentAdapter
) -> None:
    produced: list[Rec] = []
    with Opened(adapter) as opened:
        members = [opened.track(member(adapter, name)) for name in ("m1", "m2")]
        pump = Pump(list(members))

        def heartbeats() -> list[Exchange]:
            return group_broker.requests(api="ConsumerGroupHeartbeat", group_id=GROUP)

        def produce_and_consume(name: str) -> None:
            produced.extend(adapter.produce(TOPIC, keyed(len(produced), 20)))
            expected = {r.position for r in produced}
            pump.until(lambda: expected <= pump.positions(), f"the group to consume {name}")
            for consumer in members:
                consumer.commit()

        pump.until(lambda: settled(adapter, members, GROUP, TOPIC), "both members to get their partitions")
        produce_and_consume("steady")
        # The coordinator's node stops in steady state: the members' heartbeats find the connection gone, they ask
        # FindCoordinator again and carry on with the node that loaded the group; then the node starts again.
        steady = group_broker.coordinator_node(GROUP)
        group_broker.stop_node(steady)
        assert group_broker.coordinator_node(GROUP) not in (steady, -1)
        produce_and_consume("with its coordinator's node stopped in steady state")
        group_broker.start_node(steady)
        # A third member joins, and the coordinator's node stops before the others gave up its partitions.
        members.append(opened.track(member(adapter, "m3")))
        pump.add(members[-1])
        group_broker.wait_for_group_blocking(GROUP, members=3)
        coordinator = group_broker.coordinator_node(GROUP)
        group_broker.stop_node(coordinator)
        assert group_broker.coordinator_node(GROUP) not in (coordinator, -1)
        pump.until(lambda: settled(adapter, members, GROUP, TOPIC), "the rebalance to finish on the new coordinator")
        produce_and_consume("stopped")
        group_broker.start_node(coordinator)
        before_move = len(heartbeats())
        group_broker.move_group_coordinator(GROUP, coordinator)  # back, the other node still running

        def found_again() -> bool:
            """The members' heartbeats were refused by the node that gave the group up, then served again."""
            codes = [e.error_codes[0] for e in heartbeats()[before_move:]]
            return NOT_COORDINATOR in codes and codes[-len(members) :] == [0] * len(members)

        pump.until(found_again, "the members to heartbeat to their coordinator again")
        produce_and_consume("started")
        # Nothing lost, nothing twice: what changed hands was committed as it was given up.
        assert_nothing_lost(produced, pump.all_received())
        assert len(pump.all_received()) == len(produced)
        assert sorted(p for m in members for p in m.assignment()) == list(range(PARTITIONS))
    # A member joining now resumes at the committed offsets, every partition's end: it gets only what comes next.
    # (The committed offsets are read through it: librdkafka's admin ListConsumerGroupOffsets crashes on the
    # NOT_COORDINATOR its cached coordinator answers after the move, confluentinc/librdkafka#5040.)
    with Opened(adapter) as opened:
        latecomer = opened.track(member(adapter, "m4"))
        assert latecomer.committed(range(PARTITIONS)) == end_offsets(produced)
        more = adapter.produce(TOPIC, keyed(len(produced), 8))
        pump = Pump([latecomer])
        pump.until(lambda: {r.position for r in more} <= pump.positions(), "a new member to consume")
        assert sorted(r.position for r in pump.all_received()) == sorted(r.position for r in more)
