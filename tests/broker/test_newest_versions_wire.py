"""The newest versions of the group and transaction APIs over the wire (issue #16): what each new version changed,
errors included: DescribeGroups v6, DeleteGroups v3, ListTransactions v2, TxnOffsetCommit v4-v6. The data plane's
new versions (Produce v11-13) are in test_produce_newest_wire.py; OffsetCommit/OffsetFetch v10 in
test_offsets_by_topic_id_wire.py."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from broker.app import Broker
from protocol.errors import ErrorCode
from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from protocol.messages.delete_groups import DeleteGroupsRequest
from protocol.messages.describe_groups import DescribeGroupsRequest
from protocol.messages.list_transactions import ListTransactionsRequest
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic
from protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
)
from protocol.registry import ApiKey
from tests.broker.group_wire import join_and_sync
from tests.broker.wire import WireClient
from tests.durability.offsets_client import create_topic
from tests.support.broker_process import wait_until_awaited
from tests.support.txn_wire import TxnWire, describe, offsets


@pytest.fixture(autouse=True)
async def _offsets_loaded(broker: Broker) -> None:
    await broker.loaded.wait()


async def _simple_group(client: WireClient, group: str) -> None:
    """A group that exists only through a commit (Empty, deletable)."""
    await create_topic(client, "orders", 1)
    commit = OffsetCommitRequest(
        group_id=group,
        generation_id_or_member_epoch=-1,
        member_id="",
        topics=[
            OffsetCommitRequestTopic(
                name="orders", partitions=[OffsetCommitRequestPartition(partition_index=0, committed_offset=1)]
            )
        ],
    )
    response = await client.call(ApiKey.OFFSET_COMMIT, 9, commit)
    assert response.topics[0].partitions[0].error_code == ErrorCode.NONE


async def test_describe_groups_v6_unknown_group_is_group_id_not_found(broker: Broker) -> None:
    """KIP-1043: v6 answers an unknown group GROUP_ID_NOT_FOUND with Kafka's message (v5: Dead, no error); a live
    group is described as in v5."""
    client = await WireClient.connect(broker.ports[0])
    await create_topic(client, "orders", 1)
    await join_and_sync(client, "live")
    request = DescribeGroupsRequest(groups=["nobody", "live"])
    unknown, live = (await client.call(ApiKey.DESCRIBE_GROUPS, 6, request)).groups
    assert (unknown.error_code, unknown.error_message, unknown.group_state) == (
        ErrorCode.GROUP_ID_NOT_FOUND,
        "Group nobody not found.",
        "Dead",
    )
    assert (live.error_code, live.error_message, live.group_state) == (ErrorCode.NONE, None, "Stable")
    [old] = (await client.call(ApiKey.DESCRIBE_GROUPS, 5, DescribeGroupsRequest(groups=["nobody"]))).groups
    assert (old.error_code, old.group_state) == (ErrorCode.NONE, "Dead")
    await client.close()


async def test_delete_groups_v3_carries_a_null_message_per_group(broker: Broker) -> None:
    """v3 adds a per-group error message; Kafka 4.4 leaves it null for a deleted group and for the group-level
    errors (NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND, the empty id included), as the differential suite shows."""
    client = await WireClient.connect(broker.ports[0])
    await _simple_group(client, "simple")
    await join_and_sync(client, "live")
    request = DeleteGroupsRequest(groups_names=["simple", "live", "nobody", ""])
    results = (await client.call(ApiKey.DELETE_GROUPS, 3, request)).results
    assert [(r.group_id, r.error_code, r.error_message) for r in results] == [
        ("simple", ErrorCode.NONE, None),
        ("live", ErrorCode.NON_EMPTY_GROUP, None),
        ("nobody", ErrorCode.GROUP_ID_NOT_FOUND, None),
        ("", ErrorCode.GROUP_ID_NOT_FOUND, None),
    ]
    await client.close()


async def test_list_transactions_v2_filters_by_an_re2j_pattern(broker: Broker) -> None:
    """KIP-1152: v2's TransactionalIdPattern must match a whole id; RE2/J's refusal is INVALID_REGULAR_EXPRESSION;
    v1 has no pattern and lists every id."""
    client = await WireClient.connect(broker.ports[0])
    for transactional_id in ("orders-1", "orders-2", "payments"):
        assert await TxnWire(client, transactional_id, 60_000).init() == ErrorCode.NONE

    async def listed(version: int, pattern: str | None) -> tuple[int, list[str]]:
        request = ListTransactionsRequest(transactional_id_pattern=pattern)
        response = await client.call(ApiKey.LIST_TRANSACTIONS, version, request)
        return response.error_code, sorted(t.transactional_id for t in response.transaction_states)

    assert await listed(2, "orders-.*") == (ErrorCode.NONE, ["orders-1", "orders-2"])
    assert await listed(2, "orders") == (ErrorCode.NONE, [])
    assert await listed(2, None) == (ErrorCode.NONE, ["orders-1", "orders-2", "payments"])
    assert await listed(2, "orders-[") == (ErrorCode.INVALID_REGULAR_EXPRESSION, [])
    assert await listed(1, None) == (ErrorCode.NONE, ["orders-1", "orders-2", "payments"])
    await client.close()


def _txn_commit(producer: TxnWire, group: str, topic: str = "orders", topic_id: uuid.UUID | None = None) -> Any:
    partition = TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=5, committed_metadata="m")
    return TxnOffsetCommitRequest(
        transactional_id=producer.transactional_id,
        group_id=group,
        producer_id=producer.producer_id,
        producer_epoch=producer.epoch,
        topics=[TxnOffsetCommitRequestTopic(name=topic, topic_id=topic_id or uuid.UUID(int=0), partitions=[partition])],
    )


def _errors(response: Any) -> list[tuple[str, uuid.UUID, int]]:
    return [(t.name, t.topic_id, p.error_code) for t in response.topics for p in t.partitions]


@pytest.mark.parametrize(
    ("version", "expected"), [(3, ErrorCode.INVALID_TXN_STATE), (4, ErrorCode.TRANSACTION_ABORTABLE)]
)
async def test_txn_offset_commit_before_add_offsets_is_refused_up_to_v4(
    broker: Broker, version: int, expected: ErrorCode
) -> None:
    """KIP-890 part 1: a TxnOffsetCommit whose group partition was never added is refused; v4 knows the generic
    TRANSACTION_ABORTABLE (Kafka maps it to INVALID_TXN_STATE only before)."""
    client = await WireClient.connect(broker.ports[0])
    await create_topic(client, "orders", 1)
    producer = TxnWire(client, "txn-offsets", 60_000)
    assert await producer.init() == ErrorCode.NONE
    response = await client.call(ApiKey.TXN_OFFSET_COMMIT, version, _txn_commit(producer, "g"))
    assert _errors(response) == [("orders", uuid.UUID(int=0), expected)]
    await client.close()


async def test_txn_offset_commit_v5_adds_the_group_partition_and_v6_names_topics_by_id(broker: Broker) -> None:
    """KIP-890 part 2: v5 adds the group's `__consumer_offsets` partition to the transaction itself (no
    AddOffsetsToTxn); v6 names topics by id, an unknown id UNKNOWN_TOPIC_ID; the commit makes the offset visible."""
    client = await WireClient.connect(broker.ports[0])
    body = CreateTopicsRequest(topics=[CreatableTopic(name="orders", num_partitions=1, replication_factor=1)])
    orders = (await client.call(ApiKey.CREATE_TOPICS, 7, body)).topics[0].topic_id
    producer = TxnWire(client, "txn-offsets", 60_000)
    assert await producer.init() == ErrorCode.NONE
    added = await client.call(ApiKey.TXN_OFFSET_COMMIT, 5, _txn_commit(producer, "g"))
    assert _errors(added) == [("orders", uuid.UUID(int=0), ErrorCode.NONE)]
    state = await describe(client, "txn-offsets")
    assert state.state == "Ongoing" and {topic for topic, _ in state.partitions} == {"__consumer_offsets"}
    ghost = uuid.UUID("0f0f0f0f-0000-4000-8000-000000000003")
    by_id = await client.call(ApiKey.TXN_OFFSET_COMMIT, 6, _txn_commit(producer, "g", "", orders))
    unknown = await client.call(ApiKey.TXN_OFFSET_COMMIT, 6, _txn_commit(producer, "g", "", ghost))
    assert (_errors(by_id), _errors(unknown)) == (
        [("", orders, ErrorCode.NONE)],
        [("", ghost, ErrorCode.UNKNOWN_TOPIC_ID)],
    )
    assert await producer.end(commit=True) == ErrorCode.NONE

    async def stable() -> bool:
        return await offsets(client, "g", "orders", [0], require_stable=True) == {0: (5, ErrorCode.NONE)}

    await wait_until_awaited(stable, what="the committed offset, once the marker is written")
    await client.close()
