"""Several named listeners at once: each is bound, and every answer that carries a node address (Metadata,
FindCoordinator, DescribeCluster) gives the advertised address of the listener the client connected on, at every
served version, as Kafka does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from broker.app import Broker
from broker.config import BrokerConfig, ConfigError
from broker.listeners import AdvertisedListeners
from protocol.messages.describe_cluster import DescribeClusterRequest
from protocol.messages.find_coordinator import FindCoordinatorRequest
from protocol.messages.metadata import MetadataRequest
from protocol.registry import ApiKey
from tests.broker.conftest import broker_config
from tests.broker.wire import WireClient

TWO_LISTENERS = {
    "listeners": "INTERNAL://127.0.0.1:0,EXTERNAL://127.0.0.1:0",
    "advertised.listeners": "INTERNAL://internal.example:0,EXTERNAL://external.example:19093",
    "listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT",
    "inter.broker.listener.name": "INTERNAL",
}


@pytest.fixture
async def two_listeners(tmp_path: Path) -> AsyncIterator[Broker]:
    config = broker_config(tmp_path)
    instance = Broker(BrokerConfig({**dict(config.explicit), **TWO_LISTENERS}))
    await instance.start()
    await instance.loaded.wait()
    yield instance
    await instance.stop()


def versions(broker: Broker, api_key: ApiKey) -> range:
    route = broker.dispatcher.routes[api_key]
    return range(route.min_version, route.max_version + 1)


async def addresses_seen(broker: Broker, port: int) -> set[tuple[str, int]]:
    """Every (host, port) the broker names, over every served version of the three APIs, on one connection."""
    client = await WireClient.connect(port)
    seen: set[tuple[str, int]] = set()
    try:
        for v in versions(broker, ApiKey.METADATA):
            metadata = await client.call(ApiKey.METADATA, v, MetadataRequest(topics=[]))
            seen |= {(b.host, b.port) for b in metadata.brokers}
        for v in versions(broker, ApiKey.FIND_COORDINATOR):
            request = FindCoordinatorRequest(coordinator_keys=["g"]) if v >= 4 else FindCoordinatorRequest(key="g")
            found = await client.call(ApiKey.FIND_COORDINATOR, v, request)
            seen |= {(c.host, c.port) for c in found.coordinators} if v >= 4 else {(found.host, found.port)}
        for v in versions(broker, ApiKey.DESCRIBE_CLUSTER):
            cluster = await client.call(ApiKey.DESCRIBE_CLUSTER, v, DescribeClusterRequest())
            seen |= {(b.host, b.port) for b in cluster.brokers}
    finally:
        await client.close()
    return seen


async def test_each_listener_answers_with_its_own_advertised_address(two_listeners: Broker) -> None:
    internal_port, external_port = two_listeners.ports
    assert internal_port != external_port
    assert await addresses_seen(two_listeners, internal_port) == {("internal.example", internal_port)}
    assert await addresses_seen(two_listeners, external_port) == {("external.example", 19093)}


def test_a_listener_not_advertised_falls_back_to_its_bound_address() -> None:
    advertised = AdvertisedListeners(
        [("A", "127.0.0.1", 0), ("B", "127.0.0.2", 9000)],
        [("A", "a.example", 1)],
        lambda node: [5000 + node, 9000 + node],
    )
    assert advertised.address("A") == ("a.example", 1)
    assert advertised.address("b") == ("127.0.0.2", 9000)
    # Node i of a several-node cluster: each port plus i, or the one its own listener was given.
    assert advertised.address("A", 2) == ("a.example", 3)
    assert advertised.address("b", 2) == ("127.0.0.2", 9002)


def test_advertising_a_listener_that_is_not_bound_is_refused_at_startup(tmp_path: Path) -> None:
    raw = {**broker_config(tmp_path).explicit, **TWO_LISTENERS, "advertised.listeners": "OTHER://x.example:1"}
    raw["listener.security.protocol.map"] += ",OTHER:PLAINTEXT"
    with pytest.raises(ConfigError, match=r"Found OTHER\. The valid options .* are INTERNAL,EXTERNAL$"):
        BrokerConfig(raw)


def test_advertising_the_wildcard_address_is_refused_at_startup(tmp_path: Path) -> None:
    raw = {**broker_config(tmp_path).explicit, **TWO_LISTENERS, "advertised.listeners": "INTERNAL://0.0.0.0:9092"}
    with pytest.raises(
        ConfigError, match=r"^advertised\.listeners cannot use the nonroutable meta-address 0\.0\.0\.0\."
    ):
        BrokerConfig(raw)
