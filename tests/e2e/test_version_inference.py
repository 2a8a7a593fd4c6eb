"""What clients infer from ApiVersions (issue #16): the Kafka release kafka-python reports, and the request versions
aiokafka picks, against group-broker and, with `--e2e-broker=kafka`, against Kafka 4.4 itself.

kafka-python (`check_version()`) walks a table of "release R first served version V of API A" from the newest row
down and reports the first row the broker meets. Its newest rows, and what serves them here:

    (4, 3)  DescribeLogDirs v5   served
    (4, 2)  ListOffsets v11      served (tiered-storage timestamps answered as Kafka without tiered storage)
    (4, 1)  Produce v13          served (topic ids)
    (4, 0)  ListOffsets v10      served

so group-broker is reported as Kafka 4.3, what Kafka 4.4 is reported as (kafka-python has no 4.4 row).
aiokafka 0.14 infers no release any more (its `api_version` is a deprecated no-op): it picks, per request, the
newest version both sides speak, which must come out the same as against Kafka 4.4 for every API served here.
"""

from __future__ import annotations

import asyncio

import pytest
from aiokafka.client import AIOKafkaClient
from kafka import KafkaAdminClient, KafkaConsumer

from tests.e2e.targets import E2ETarget

pytestmark = pytest.mark.integration

#: What kafka-python reports for Kafka 4.4 and for group-broker (its newest row, DescribeLogDirs v5, is a Kafka 4.3
#: one).
INFERRED = (4, 3)

#: The request versions aiokafka 0.14 picks against Kafka 4.4, by API key (its newest ones for every API).
AIOKAFKA_VERSIONS_ON_KAFKA_44 = {
    0: 7,  # Produce
    1: 11,  # Fetch
    2: 3,  # ListOffsets
    3: 5,  # Metadata
    8: 3,  # OffsetCommit
    9: 3,  # OffsetFetch
    10: 1,  # FindCoordinator
    11: 5,  # JoinGroup
    12: 1,  # Heartbeat
    13: 1,  # LeaveGroup
    14: 3,  # SyncGroup
    15: 3,  # DescribeGroups
    16: 1,  # ListGroups
    18: 2,  # ApiVersions
    19: 3,  # CreateTopics
    20: 3,  # DeleteTopics
    22: 0,  # InitProducerId
    24: 0,  # AddPartitionsToTxn
    25: 0,  # AddOffsetsToTxn
    26: 0,  # EndTxn
    28: 0,  # TxnOffsetCommit
    32: 2,  # DescribeConfigs
    37: 1,  # CreatePartitions
    42: 1,  # DeleteGroups
}


def test_kafka_python_admin_and_consumer_infer_the_kafka_release(e2e_target: E2ETarget) -> None:
    admin = KafkaAdminClient(bootstrap_servers=e2e_target.bootstrap, client_id="inference-admin")
    consumer = KafkaConsumer(bootstrap_servers=e2e_target.bootstrap, client_id="inference-consumer")
    try:
        assert admin._client.check_version() == INFERRED
        assert consumer._client.check_version() == INFERRED
    finally:
        admin.close()
        consumer.close()


async def _aiokafka_versions(bootstrap: str) -> dict[int, tuple[int, int]]:
    """The ApiVersions ranges aiokafka read on its connection to the broker (what its requests negotiate from)."""
    client = AIOKafkaClient(bootstrap_servers=bootstrap, client_id="inference-aiokafka")
    await client.bootstrap()
    try:
        [broker] = client.cluster.brokers()
        connection = await client._get_conn(broker.nodeId)
        assert connection is not None
        return dict(connection._versions)
    finally:
        await client.close()


def _picked(ranges: dict[int, tuple[int, int]]) -> dict[int, int]:
    """The version aiokafka picks per API: its newest request class inside the broker's range (`Request.prepare`)."""
    from aiokafka.protocol import admin, commit, coordination, fetch, group, metadata, offset, produce, transaction
    from aiokafka.protocol.api import Request

    modules = (admin, commit, coordination, fetch, group, metadata, offset, produce, transaction)
    wrappers = [
        cls
        for module in modules
        for cls in vars(module).values()
        if isinstance(cls, type) and issubclass(cls, Request) and getattr(cls, "_CLASSES", None)
    ]
    picked = {}
    for wrapper in wrappers:
        lo, hi = ranges.get(wrapper.API_KEY, (1, 0))
        versions = [c.API_VERSION for c in wrapper._CLASSES if lo <= c.API_VERSION <= hi]
        if versions:
            picked[wrapper.API_KEY] = max(versions)
    return picked


def test_aiokafka_picks_the_request_versions_it_picks_on_kafka_44(e2e_target: E2ETarget) -> None:
    ranges = asyncio.run(_aiokafka_versions(e2e_target.bootstrap))
    picked = _picked(ranges)
    expected = {key: version for key, version in AIOKAFKA_VERSIONS_ON_KAFKA_44.items() if key in ranges}
    assert {key: picked.get(key) for key in expected} == expected
    if e2e_target.broker is None:  # on Kafka itself every API above is served
        assert expected == AIOKAFKA_VERSIONS_ON_KAFKA_44
