"""Config APIs over raw requests at every advertised version: DescribeConfigs v1-4, AlterConfigs v0-2,
IncrementalAlterConfigs v0-1, ListConfigResources v0-1 and CreateTopics' configs, with Kafka 4.4's answers (codes,
messages, sources, types, synonyms) as the reference broker gave them; then what a change does to the logs and that
it survives a restart."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from broker.app import Broker
from broker.startup import StartupError
from protocol.errors import ErrorCode
from protocol.messages.create_topics import CreatableTopic, CreatableTopicConfig, CreateTopicsRequest
from protocol.registry import ApiKey
from storage.broker_configs import BROKER_CONFIGS_FILE
from storage.config import TOPIC_CONFIG_NAMES
from tests.broker.configs_wire import (
    APPEND,
    BOOLEAN,
    BROKER,
    BROKER_LOGGER,
    DEFAULT,
    DELETE,
    DOUBLE,
    DYNAMIC_BROKER,
    DYNAMIC_DEFAULT_BROKER,
    DYNAMIC_TOPIC,
    INT,
    LIST,
    LONG,
    SET,
    STATIC_BROKER,
    STRING,
    SUBTRACT,
    TOPIC,
    alter_configs,
    alter_request_of,
    describe,
    described,
    incremental_alter,
    incremental_request_of,
    list_resources,
)
from tests.broker.conftest import broker_config, running_broker
from tests.broker.wire import WireClient
from tests.support.broker_process import wait_until_async
from tests.support.data_plane import batch, produce

MALFORMED = (
    "This most likely occurs because of a request being malformed by the client library or the message was sent "
    "to an incompatible broker. See the broker logs for more details."
)
OK = (ErrorCode.NONE, None)


@pytest.fixture
async def client(broker: Broker) -> AsyncIterator[WireClient]:
    connection = await WireClient.connect(broker.ports[0])
    yield connection
    await connection.close()


def synonyms_of(entry: object) -> list[tuple[str, str | None, int]]:
    return [(s.name, s.value, s.source) for s in entry.synonyms]  # type: ignore[attr-defined]


# -- DescribeConfigs ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [1, 2, 3, 4])
async def test_describe_topic_lists_every_key_with_kafkas_sources_synonyms_and_types(
    broker: Broker, client: WireClient, version: int
) -> None:
    broker.create_topic("described", 1, {"retention.ms": "60000"})
    entries = await described(client, TOPIC, "described", version=version, synonyms=True, documentation=version >= 3)
    assert set(entries) == TOPIC_CONFIG_NAMES  # 37 keys; Kafka's internal ones only where a topic sets them
    retention = entries["retention.ms"]
    assert (retention.value, retention.config_source) == ("60000", DYNAMIC_TOPIC)
    assert synonyms_of(retention) == [("retention.ms", "60000", DYNAMIC_TOPIC)]  # log.retention.ms is not set
    assert synonyms_of(entries["cleanup.policy"]) == [("log.cleanup.policy", "delete", DEFAULT)]
    assert entries["cleanup.policy"].config_source == DEFAULT
    # Kafka 4's formatter records the cluster-wide min.insync.replicas as a dynamic default (KIP-966)
    assert synonyms_of(entries["min.insync.replicas"]) == [
        ("min.insync.replicas", "1", DYNAMIC_DEFAULT_BROKER),
        ("min.insync.replicas", "1", DEFAULT),
    ]
    assert synonyms_of(entries["segment.ms"]) == []  # log.roll.ms unset: Kafka drops log.roll.hours too
    assert entries["message.timestamp.after.max.ms"].value == "3600000"
    assert not any(e.read_only or e.is_sensitive for e in entries.values())
    if version >= 3:
        types = {name: entries[name].config_type for name in ("retention.bytes", "cleanup.policy", "preallocate")}
        assert types == {"retention.bytes": LONG, "cleanup.policy": LIST, "preallocate": BOOLEAN}
        more = ("max.message.bytes", "compression.type", "min.cleanable.dirty.ratio")
        assert [entries[name].config_type for name in more] == [INT, STRING, DOUBLE]
        assert all(e.documentation for e in entries.values())
    else:
        assert {e.config_type for e in entries.values()} == {0}  # not in these versions


@pytest.mark.parametrize("version", [1, 2, 3, 4])
async def test_describe_without_synonyms_or_documentation_and_by_key(
    broker: Broker, client: WireClient, version: int
) -> None:
    broker.create_topic("plain", 1, {"internal.segment.bytes": "2000"})
    result = await describe(
        client, TOPIC, "plain", ["retention.ms", "bogus", "internal.segment.bytes"], version=version
    )
    assert [(e.name, e.value) for e in result.configs] == [
        ("retention.ms", "604800000"),
        ("internal.segment.bytes", "2000"),
    ]
    assert all(e.synonyms == [] for e in result.configs)
    if version >= 3:
        assert all(e.documentation is None for e in result.configs)
    everything = await describe(client, TOPIC, "plain", [], version=version)
    assert len(everything.configs) == len(TOPIC_CONFIG_NAMES) + 1  # the internal key this topic sets


@pytest.mark.parametrize("version", [1, 2, 3, 4])
async def test_describe_refusals(client: WireClient, version: int) -> None:
    cases = [
        (TOPIC, "missing", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ""),  # Kafka sends an empty message here
        (TOPIC, "", ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic name is invalid: the empty string is not allowed"),
        (BROKER, "7", ErrorCode.INVALID_REQUEST, "Unexpected broker id, expected 1 or empty string, but received 7"),
        (BROKER, "x", ErrorCode.INVALID_REQUEST, "Broker id must be an integer, but it is: x"),
        (BROKER_LOGGER, "", ErrorCode.INVALID_REQUEST, "Broker id must not be empty"),
        (BROKER_LOGGER, "2", ErrorCode.INVALID_REQUEST, "Unexpected broker id, expected 1 but received 2"),
        (3, "x", ErrorCode.INVALID_REQUEST, MALFORMED),
    ]
    for resource_type, name, code, message in cases:
        result = await describe(client, resource_type, name, version=version)
        assert (result.error_code, result.error_message, result.configs) == (code, message, []), (resource_type, name)
        assert (result.resource_type, result.resource_name) == (resource_type, name)


async def test_describe_broker_resources(broker: Broker, client: WireClient) -> None:
    entries = await described(client, BROKER, "1", synonyms=True)
    assert entries["node.id"].read_only and not entries["log.retention.ms"].read_only
    assert (entries["log.retention.ms"].value, entries["log.retention.ms"].synonyms) == (None, [])
    assert entries["log.retention.hours"].config_type == INT and entries["log.retention.bytes"].config_type == LONG
    session = entries["group.min.session.timeout.ms"]  # set by the test's static configuration
    assert session.config_source == STATIC_BROKER
    assert synonyms_of(session) == [
        ("group.min.session.timeout.ms", "100", STATIC_BROKER),
        ("group.min.session.timeout.ms", "6000", DEFAULT),
    ]
    assert entries["listeners"].read_only  # dynamic in Kafka, read at startup here (README)
    cluster = await described(client, BROKER, "", synonyms=True)
    assert list(cluster) == ["min.insync.replicas"]
    assert synonyms_of(cluster["min.insync.replicas"]) == [("min.insync.replicas", "1", DYNAMIC_DEFAULT_BROKER)]
    loggers = await describe(client, BROKER_LOGGER, "1")
    assert (loggers.error_code, loggers.configs) == (ErrorCode.NONE, [])  # no log4j loggers to list


# -- AlterConfigs ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1, 2])
async def test_alter_configs_replaces_a_topics_whole_set_of_overrides(
    broker: Broker, client: WireClient, version: int
) -> None:
    broker.create_topic("altered", 1, {"retention.ms": "12345", "segment.ms": "99999"})
    wanted = {"retention.bytes": " 77 ", "cleanup.policy": "delete,delete", "min.cleanable.dirty.ratio": "1e-5"}
    assert await alter_configs(client, TOPIC, "altered", wanted, version=version, validate_only=True) == OK
    assert dict(broker.logs.topic("altered").configs) == {"retention.ms": "12345", "segment.ms": "99999"}  # type: ignore[union-attr]
    assert await alter_configs(client, TOPIC, "altered", wanted, version=version) == OK
    entries = await described(client, TOPIC, "altered")
    shown = {name: (e.value, e.config_source) for name, e in entries.items() if e.config_source == DYNAMIC_TOPIC}
    assert shown == {  # normalised as Kafka shows them; the old overrides are gone
        "retention.bytes": ("77", DYNAMIC_TOPIC),
        "cleanup.policy": ("delete", DYNAMIC_TOPIC),
        "min.cleanable.dirty.ratio": ("1.0E-5", DYNAMIC_TOPIC),
    }
    assert entries["retention.ms"].value == "604800000"
    assert broker.logs.get("altered", 0).config.retention_bytes == 77  # type: ignore[union-attr]


@pytest.mark.parametrize("version", [0, 1, 2])
async def test_alter_configs_refusals_for_topics(broker: Broker, client: WireClient, version: int) -> None:
    broker.create_topic("kept", 1, {"retention.ms": "5000"})
    cases = [
        (
            {"retention.bytes": "abc"},
            40,
            "Invalid value abc for configuration retention.bytes: Not a number of type LONG",
        ),
        ({"bogus.key": "1"}, 40, "Unknown topic config name: bogus.key"),
        ({"retention.ms": None}, 42, "Null value not supported for : retention.ms"),
        ([("retention.ms", "1"), ("retention.ms", "2")], 42, "Error due to duplicate config keys"),
        (
            {"segment.bytes": "1000"},
            40,
            "Invalid value 1000 for configuration segment.bytes: Value must be at least 1048576",
        ),
        (
            {"remote.storage.enable": "true"},
            40,
            "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log "
            "storage.",
        ),
    ]
    for configs, code, message in cases:
        assert await alter_configs(client, TOPIC, "kept", configs, version=version) == (code, message), configs
    missing = await alter_configs(client, TOPIC, "nope", {"retention.ms": "1"}, version=version)
    assert missing == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'nope' does not exist.")
    default = await alter_configs(client, TOPIC, "", {"retention.ms": "1"}, version=version)
    assert default == (ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.")
    illegal = await alter_configs(client, TOPIC, "bad/name", {"retention.ms": "1"}, version=version)
    assert illegal[0] == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert dict(broker.logs.topic("kept").configs) == {"retention.ms": "5000"}  # type: ignore[union-attr]
    logger = await alter_configs(client, BROKER_LOGGER, "1", {"root": "DEBUG"}, version=version)
    assert logger == (ErrorCode.INVALID_REQUEST, "Unknown resource type 8")


@pytest.mark.parametrize("version", [0, 1, 2])
async def test_alter_configs_of_the_broker(broker: Broker, client: WireClient, version: int) -> None:
    assert (
        await alter_configs(client, BROKER, "1", {"log.retention.ms": "8888", "bogus.key": "x"}, version=version) == OK
    )
    node = await described(client, BROKER, "1", synonyms=True)
    assert (node["log.retention.ms"].value, node["log.retention.ms"].config_source) == ("8888", DYNAMIC_BROKER)
    assert synonyms_of(node["log.retention.ms"]) == [
        ("log.retention.ms", "8888", DYNAMIC_BROKER),
        ("log.retention.hours", "168", DEFAULT),
    ]
    # a key this broker does not know is kept, and shown as Kafka shows an unknown type: sensitive, no value
    unknown = node["bogus.key"]
    assert (unknown.value, unknown.is_sensitive, unknown.read_only, unknown.config_source) == (None, True, True, 2)
    cluster = {"min.insync.replicas": "1", "message.max.bytes": "5000"}
    assert await alter_configs(client, BROKER, "", cluster, version=version) == OK
    topic = await described(client, TOPIC, "__consumer_offsets", synonyms=True)
    assert synonyms_of(topic["retention.ms"])[0] == ("log.retention.ms", "8888", DYNAMIC_BROKER)
    assert (topic["max.message.bytes"].value, topic["max.message.bytes"].config_source) == ("5000", 3)
    cases = [
        (
            BROKER,
            "",
            {"message.max.bytes": "5000"},
            40,
            "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.",
        ),
        (
            BROKER,
            "1",
            {"min.insync.replicas": "2"},
            40,
            "Broker-level min.insync.replicas cannot be altered while ELR is enabled.",
        ),
        (
            BROKER,
            "1",
            {"log.retention.hours": "5"},
            42,
            "Cannot update these configs dynamically: [log.retention.hours]",
        ),
        (
            BROKER,
            "1",
            {"node.id": "5", "log.cleaner.enable": "false"},
            42,
            "Cannot update these configs dynamically: [log.cleaner.enable, node.id]",
        ),
        (
            BROKER,
            "1",
            {"listeners": "PLAINTEXT://127.0.0.1:1"},
            42,
            "Cannot update these configs dynamically: [listeners]",
        ),
        (
            BROKER,
            "1",
            {"log.retention.ms": "abc"},
            42,
            "Invalid value abc for configuration log.retention.ms: Not a number of type LONG",
        ),
        (
            BROKER,
            "1",
            {"log.segment.bytes": "1000"},
            42,
            "Invalid value 1000 for configuration log.segment.bytes: Value must be at least 1048576",
        ),
        (BROKER, "1", {"log.roll.ms": "0"}, 42, "requirement failed: log.roll.ms must be greater than or equal to 1"),
        (BROKER, "1", {"log.retention.ms": None}, 42, "Null value not supported for : log.retention.ms"),
        (BROKER, "2", {"log.retention.ms": "1"}, 42, "Unexpected broker id, expected 1, but received 2"),
        (BROKER, "x", {"log.retention.ms": "1"}, 42, "Node id must be an integer, but it is: x"),
        (3, "x", {"a": "b"}, 42, "Unknown resource type 3"),
    ]
    for resource_type, name, configs, code, message in cases:
        assert await alter_configs(client, resource_type, name, configs, version=version) == (code, message), configs
    # AlterConfigs on "1" replaces the broker's whole set: without log.retention.ms, the cluster default shows again
    assert await alter_configs(client, BROKER, "1", {}, version=version) == OK
    assert (await described(client, BROKER, "1"))["log.retention.ms"].value is None


# -- IncrementalAlterConfigs ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1])
async def test_incremental_operations_on_a_topic(broker: Broker, client: WireClient, version: int) -> None:
    broker.create_topic("ops", 1, {})

    async def policy() -> str:
        return (await described(client, TOPIC, "ops"))["cleanup.policy"].value  # type: ignore[no-any-return]

    assert await incremental_alter(client, TOPIC, "ops", [("cleanup.policy", APPEND, "compact")], version=version) == OK
    assert await policy() == "delete,compact"  # APPEND starts from the default
    assert broker.logs.get("ops", 0).config.compact_enabled  # type: ignore[union-attr]
    await incremental_alter(client, TOPIC, "ops", [("cleanup.policy", APPEND, "delete,compact")], version=version)
    assert await policy() == "delete,compact"
    await incremental_alter(client, TOPIC, "ops", [("cleanup.policy", SUBTRACT, "compact,bogus")], version=version)
    assert await policy() == "delete"
    await incremental_alter(client, TOPIC, "ops", [("cleanup.policy", SUBTRACT, "delete")], version=version)
    assert await policy() == ""  # neither deleted nor compacted
    ops = [("retention.ms", SET, "5000"), ("bogus", DELETE, None), ("cleanup.policy", DELETE, "ignored")]
    assert await incremental_alter(client, TOPIC, "ops", ops, version=version) == OK
    assert dict(broker.logs.topic("ops").configs) == {"retention.ms": "5000"}  # type: ignore[union-attr]
    validated = await incremental_alter(
        client, TOPIC, "ops", [("retention.ms", DELETE, None)], version=version, validate_only=True
    )
    assert validated == OK and dict(broker.logs.topic("ops").configs) == {"retention.ms": "5000"}  # type: ignore[union-attr]
    cases = [
        ([("retention.ms", APPEND, "5")], 40, "Can't APPEND to key retention.ms because its type is not LIST."),
        ([("retention.ms", SUBTRACT, "5")], 40, "Can't SUBTRACT to key retention.ms because its type is not LIST."),
        ([("bogus", APPEND, "5")], 40, "Can't APPEND to key bogus because its type is not LIST."),
        (
            [("cleanup.policy", APPEND, "bogus")],
            40,
            "Invalid value bogus for configuration cleanup.policy: String must be one of: compact, delete",
        ),
        ([("cleanup.policy", APPEND, "")], 40, "Configuration 'cleanup.policy' values must not be empty."),
        ([("bogus", SET, "1")], 40, "Unknown topic config name: bogus"),
        ([("retention.ms", SET, None)], 42, "Null value not supported for : retention.ms"),
        ([("retention.ms", SET, "1"), ("retention.ms", DELETE, None)], 42, "Error due to duplicate config keys"),
        ([("retention.ms", 4, "5")], -1, None),  # Kafka's controller fails on an unknown operation
    ]
    for ops, code, message in cases:
        assert await incremental_alter(client, TOPIC, "ops", ops, version=version) == (code, message), ops
    missing = await incremental_alter(client, TOPIC, "nope", [("retention.ms", DELETE, None)], version=version)
    assert missing == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'nope' does not exist.")


@pytest.mark.parametrize("version", [0, 1])
async def test_incremental_operations_on_the_broker(broker: Broker, client: WireClient, version: int) -> None:
    assert await incremental_alter(client, BROKER, "", [("log.retention.ms", SET, "7777")], version=version) == OK
    assert (
        await incremental_alter(client, BROKER, "1", [("log.cleanup.policy", APPEND, "compact")], version=version) == OK
    )
    node = await described(client, BROKER, "1")
    assert (node["log.retention.ms"].value, node["log.retention.ms"].config_source) == ("7777", DYNAMIC_DEFAULT_BROKER)
    assert (node["log.cleanup.policy"].value, node["log.cleanup.policy"].config_source) == (
        "delete,compact",
        DYNAMIC_BROKER,
    )
    assert await incremental_alter(client, BROKER, "1", [("log.retention.hours", DELETE, None)], version=version) == OK
    cases = [
        (
            "1",
            [("log.retention.ms", APPEND, "5")],
            40,
            "Config value append is not allowed for config key: log.retention.ms",
        ),
        (
            "1",
            [("log.retention.ms", SUBTRACT, "5")],
            40,
            "Config value subtract is not allowed for config key: log.retention.ms",
        ),
        ("1", [("bogus", APPEND, "x")], 40, "Unknown config name: bogus"),
        ("1", [("log.retention.ms", 4, "1")], 42, "Unknown operations type 4"),
        (
            "1",
            [("log.retention.hours", SET, "1")],
            42,
            "Cannot update these configs dynamically: [log.retention.hours]",
        ),
        ("1", [("log.cleanup.policy", APPEND, "")], 42, "Configuration 'log.cleanup.policy' values must not be empty."),
        (
            "1",
            [("min.insync.replicas", DELETE, None)],
            40,
            "Broker-level min.insync.replicas cannot be altered while ELR is enabled.",
        ),
        (
            "",
            [("min.insync.replicas", DELETE, None)],
            40,
            "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.",
        ),
        ("x", [("log.retention.ms", 4, "1")], 42, "Node id must be an integer, but it is: x"),
    ]
    for name, ops, code, message in cases:
        assert await incremental_alter(client, BROKER, name, ops, version=version) == (code, message), ops
    assert await incremental_alter(client, BROKER, "", [("log.retention.ms", DELETE, None)], version=version) == OK
    assert (await described(client, BROKER, "1"))["log.retention.ms"].value is None
    logger = await incremental_alter(client, BROKER_LOGGER, "1", [("root", SET, "DEBUG")], version=version)
    assert logger == (ErrorCode.INVALID_CONFIG, "Logger root does not exist!")  # no log4j loggers here
    logger = await incremental_alter(client, BROKER_LOGGER, "1", [("root", APPEND, "DEBUG")], version=version)
    assert logger == (ErrorCode.INVALID_REQUEST, "APPEND operation is not allowed for the BROKER_LOGGER resource")


# -- ListConfigResources --------------------------------------------------------------------------------------------


async def test_list_config_resources(broker: Broker, client: WireClient) -> None:
    broker.create_topic("listed", 1, {})
    assert (await list_resources(client, version=0)).config_resources == []  # v0: client-metrics resources only
    everything = await list_resources(client)
    pairs = [(r.resource_name, r.resource_type) for r in everything.config_resources]
    assert pairs[:2] == [("1", BROKER_LOGGER), ("1", BROKER)]
    assert ("listed", TOPIC) in pairs and ("__consumer_offsets", TOPIC) in pairs
    brokers = await list_resources(client, [BROKER, BROKER])
    assert [(r.resource_name, r.resource_type) for r in brokers.config_resources] == [("1", BROKER)]
    assert (await list_resources(client, [16, 32])).config_resources == []
    refused = await list_resources(client, [3])
    assert (refused.error_code, refused.config_resources) == (ErrorCode.UNSUPPORTED_VERSION, [])


# -- CreateTopics' configs ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [2, 3, 4, 5, 6, 7])
async def test_create_topics_checks_and_echoes_configs(broker: Broker, client: WireClient, version: int) -> None:
    def request(name: str, configs: dict[str, str | None], validate_only: bool = False) -> CreateTopicsRequest:
        pairs = [CreatableTopicConfig(name=k, value=v) for k, v in configs.items()]
        topic = CreatableTopic(name=name, num_partitions=-1, replication_factor=-1, configs=pairs)
        return CreateTopicsRequest(topics=[topic], timeout_ms=5000, validate_only=validate_only)

    [null] = (await client.call(ApiKey.CREATE_TOPICS, version, request(f"n{version}", {"retention.ms": None}))).topics
    assert (null.error_code, null.error_message) == (40, "Null value not supported for topic configs: retention.ms")
    checked = request(f"v{version}", {"retention.ms": "5"}, validate_only=True)
    [valid] = (await client.call(ApiKey.CREATE_TOPICS, version, checked)).topics
    assert (valid.error_code, valid.error_message) == (ErrorCode.NONE, None)
    assert broker.logs.topic(f"v{version}") is None
    [made] = (await client.call(ApiKey.CREATE_TOPICS, version, request(f"c{version}", {"retention.ms": "5"}))).topics
    assert (made.error_code, made.error_message) == (ErrorCode.NONE, None)
    if version >= 5:
        for answer in (valid, made):
            echoed = {c.name: (c.value, c.config_source, c.read_only, c.is_sensitive) for c in answer.configs}
            assert set(echoed) == TOPIC_CONFIG_NAMES
            assert echoed["retention.ms"] == ("5", DYNAMIC_TOPIC, False, False)
            assert echoed["min.insync.replicas"] == ("1", DYNAMIC_DEFAULT_BROKER, False, False)
            assert echoed["cleanup.policy"] == ("delete", DEFAULT, False, False)
            assert (answer.num_partitions, answer.replication_factor) == (1, 1)


# -- what a change does, and that it survives a restart -------------------------------------------------------------


async def test_a_broker_default_reaches_topics_without_an_override_and_survives_a_restart(tmp_path: Path) -> None:
    async with running_broker(tmp_path) as broker:
        broker.create_topic("follows", 1, {})
        broker.create_topic("pinned", 1, {"max.message.bytes": "100000"})
        client = await WireClient.connect(broker.ports[0])
        cluster = {"min.insync.replicas": "1", "message.max.bytes": "200"}
        assert await alter_configs(client, BROKER, "", cluster) == OK
        big = batch(b"x" * 500)
        assert (await produce(client, "follows", big)).error_code == ErrorCode.MESSAGE_TOO_LARGE
        assert (await produce(client, "pinned", big)).error_code == ErrorCode.NONE
        await client.close()
    async with running_broker(tmp_path) as broker:
        client = await WireClient.connect(broker.ports[0])
        assert (await produce(client, "follows", batch(b"x" * 500))).error_code == ErrorCode.MESSAGE_TOO_LARGE
        entries = await described(client, TOPIC, "follows")
        assert (entries["max.message.bytes"].value, entries["max.message.bytes"].config_source) == ("200", 3)
        await client.close()


async def test_max_message_bytes_of_a_topic_rejects_a_batch_and_survives_a_restart(tmp_path: Path) -> None:
    async with running_broker(tmp_path) as broker:
        broker.create_topic("small", 1, {})
        client = await WireClient.connect(broker.ports[0])
        assert (await produce(client, "small", batch(b"x" * 500))).error_code == ErrorCode.NONE
        assert await alter_configs(client, TOPIC, "small", {"max.message.bytes": "200"}) == OK
        assert (await produce(client, "small", batch(b"x" * 500))).error_code == ErrorCode.MESSAGE_TOO_LARGE
        await client.close()
    async with running_broker(tmp_path) as broker:
        client = await WireClient.connect(broker.ports[0])
        assert (await produce(client, "small", batch(b"x" * 500))).error_code == ErrorCode.MESSAGE_TOO_LARGE
        assert (await produce(client, "small", batch(b"x" * 50))).error_code == ErrorCode.NONE
        await client.close()


async def test_a_retention_shrink_deletes_segments_on_the_next_retention_pass(tmp_path: Path) -> None:
    async with running_broker(tmp_path) as broker:
        broker.create_topic("shrunk", 1, {"internal.segment.bytes": "1000"})
        client = await WireClient.connect(broker.ports[0])
        now = broker.clock.wall_ms()  # recent records: the default retention.ms keeps them
        for n in range(20):
            assert (await produce(client, "shrunk", batch(b"%d" % n * 100, timestamp=now))).error_code == ErrorCode.NONE
        log = broker.logs.get("shrunk", 0)
        assert log is not None and log.segment_count > 5
        broker.advance_time(broker.config["log.retention.check.interval.ms"])
        assert log.segment_count > 5  # nothing to delete yet
        assert await incremental_alter(client, TOPIC, "shrunk", [("retention.bytes", SET, "1")]) == OK
        broker.advance_time(broker.config["log.retention.check.interval.ms"])
        assert log.segment_count == 1 and log.log_start_offset > 0
        await client.close()
    async with running_broker(tmp_path) as broker:
        log = broker.logs.get("shrunk", 0)
        assert log is not None and log.config.retention_bytes == 1


async def test_compaction_starts_on_a_topic_switched_to_compact_and_it_stays_compacted(tmp_path: Path) -> None:
    fast = {"log_cleaner_backoff_ms": "20"}
    async with running_broker(tmp_path, **fast) as broker:
        broker.create_topic("table", 1, {"internal.segment.bytes": "600", "min.cleanable.dirty.ratio": "0.01"})
        client = await WireClient.connect(broker.ports[0])
        keyed = [(b"k%d" % (n % 3), b"v%d" % n) for n in range(40)]
        for key, value in keyed:
            assert (await produce(client, "table", keyed_batch(key, value))).error_code == ErrorCode.NONE
        log = broker.logs.get("table", 0)
        assert log is not None
        before = log.size_in_bytes
        passes = broker.compaction.passes  # type: ignore[union-attr]
        await wait_until_async(lambda: broker.compaction.passes >= passes + 2, what="two cleaner passes")  # type: ignore[union-attr]
        assert log.size_in_bytes == before  # cleanup.policy=delete: the cleaner leaves it alone
        assert (
            await alter_configs(
                client,
                TOPIC,
                "table",
                {"cleanup.policy": "compact", "internal.segment.bytes": "600", "min.cleanable.dirty.ratio": "0.01"},
            )
            == OK
        )
        await wait_until_async(lambda: log.size_in_bytes < before, what="the cleaner to compact the switched topic")
        await client.close()
    async with running_broker(tmp_path, **fast) as broker:
        log = broker.logs.get("table", 0)
        assert log is not None and log.config.compact_enabled


def keyed_batch(key: bytes, value: bytes) -> bytes:
    from protocol.records import Record, RecordBatch, encode_batch
    from tests.support.data_plane import BASE_TS

    return encode_batch(
        RecordBatch.from_records(
            [Record(offset_delta=0, timestamp_delta=0, key=key, value=value)], base_timestamp=BASE_TS
        )
    )


async def test_a_produce_outside_the_timestamp_window_is_invalid_timestamp(broker: Broker, client: WireClient) -> None:
    broker.create_topic("window", 1, {})
    now = broker.clock.wall_ms()
    assert (await produce(client, "window", batch(b"v", timestamp=now - 120_000))).error_code == ErrorCode.NONE
    assert await alter_configs(client, TOPIC, "window", {"message.timestamp.before.max.ms": "60000"}) == OK
    refused = await produce(client, "window", batch(b"v", timestamp=now - 120_000))
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.INVALID_TIMESTAMP,
        "One or more records have been rejected due to invalid timestamp",
    )
    [(index, message)] = [(e.batch_index, e.batch_index_error_message) for e in refused.record_errors]
    assert index == 0 and message.startswith(f"Timestamp {now - 120_000} of message with offset 0 is out of range.")
    future = await produce(client, "window", batch(b"v", timestamp=now + 2 * 3_600_000))
    assert future.error_code == ErrorCode.INVALID_TIMESTAMP  # message.timestamp.after.max.ms: an hour by default


def test_a_damaged_dynamic_configs_file_refuses_the_start(tmp_path: Path) -> None:
    import asyncio

    async def start() -> None:
        Broker(broker_config(tmp_path))

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / BROKER_CONFIGS_FILE).write_text("{not json")
    with pytest.raises(StartupError, match=r"broker-configs\.json.*refuses to start"):
        asyncio.run(start())
    assert (tmp_path / "data" / BROKER_CONFIGS_FILE).read_text() == "{not json"


@pytest.mark.parametrize("incremental", [False, True])
async def test_a_resource_named_twice_is_refused_both_times(
    broker: Broker, client: WireClient, incremental: bool
) -> None:
    broker.create_topic("twice", 1, {})
    pairs = [("retention.ms", "1000"), ("retention.ms", "2000")]
    if incremental:
        request: object = incremental_request_of(
            [(TOPIC, "twice", [(k, SET, v)]) for k, v in pairs] + [(TOPIC, "once", [("retention.ms", SET, "1")])]
        )
        response = await client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, request)
    else:
        request = alter_request_of([(TOPIC, "twice", [p]) for p in pairs] + [(TOPIC, "once", [("retention.ms", "1")])])
        response = await client.call(ApiKey.ALTER_CONFIGS, 2, request)
    answers = [(r.resource_name, r.error_code, r.error_message) for r in response.responses]
    assert answers == [
        ("twice", ErrorCode.INVALID_REQUEST, "Each resource must appear at most once."),
        ("twice", ErrorCode.INVALID_REQUEST, "Each resource must appear at most once."),
        ("once", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'once' does not exist."),
    ]
    assert dict(broker.logs.topic("twice").configs) == {}  # type: ignore[union-attr]


async def test_tls_secrets_are_described_as_sensitive_without_their_values(tmp_path: Path) -> None:
    """Kafka's PASSWORD keys (the inline PEM key and chain, key and store passwords) are never shown: value null
    and is_sensitive, in the entry and in its synonyms, whatever the listener setting them is."""
    secret = "not-to-be-shown"
    async with running_broker(tmp_path, ssl_key_password=secret, ssl_truststore_certificates=secret) as broker:
        client = await WireClient.connect(broker.ports[0])
        entries = await described(client, BROKER, "1", synonyms=True)
        for name in ("ssl.key.password", "ssl.truststore.certificates", "ssl.keystore.key"):
            entry = entries[name]
            assert (entry.value, entry.is_sensitive) == (None, True), name
            assert all(s.value is None for s in entry.synonyms), name
        assert (entries["ssl.keystore.type"].value, entries["ssl.keystore.type"].is_sensitive) == ("JKS", False)
        assert entries["ssl.key.password"].config_source == STATIC_BROKER
        await client.close()
