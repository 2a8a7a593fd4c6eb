"""The newest versions of the group and transaction admin APIs over the wire (issue #16): what each new version
changed, errors included. The data plane's new versions (Produce v12-13) are in test_produce_newest_wire.py; the
offset APIs by topic id in test_offsets_by_topic_id_wire.py."""

from __future__ import annotations

import pytest

from broker.app import Broker
from protocol.errors import ErrorCode
from protocol.messages.delete_groups import DeleteGroupsRequest
from protocol.messages.describe_groups import DescribeGroupsRequest
from protocol.messages.list_transactions import ListTransactionsRequest
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic
from protocol.registry import ApiKey
from tests.broker.group_wire import join_and_sync
from tests.broker.wire import WireClient
from tests.durability.offsets_client import create_topic
from tests.support.txn_wire import TxnWire


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
