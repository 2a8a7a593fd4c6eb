"""Dynamic configs (issue #16): DescribeConfigs, AlterConfigs, IncrementalAlterConfigs, ListConfigResources and the
configs of CreateTopics, answered by both brokers.

A described resource is recorded with its entries sorted by name (neither broker promises an order) and the
documentation reduced to whether there is one (ours is in our own words). Kafka applies a config change through its
metadata log, so a broker may describe the old value for a moment after AlterConfigs answered: the scenarios ask
again until the change shows (as a client would) before recording. Changes of broker resources run on a pair of
brokers of their own (`DYNAMIC_SETTINGS`), so no other scenario sees their effect.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from protocol.messages.create_topics import CreatableTopic, CreatableTopicConfig, CreateTopicsRequest
from protocol.messages.list_config_resources import ListConfigResourcesRequest
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from protocol.registry import ApiKey
from tests.broker.configs_wire import (
    APPEND,
    BROKER,
    BROKER_LOGGER,
    DELETE,
    SET,
    SUBTRACT,
    TOPIC,
    alter_request,
    alter_request_of,
    describe_request,
    incremental_request,
    incremental_request_of,
)
from tests.differential.normalize import plain
from tests.differential.registry import Known, scenario
from tests.differential.scenarios.group_state import ask
from tests.differential.session import Conn, Session
from tests.reference.settings import SHARED_GROUP_SETTINGS
from tests.support.data_plane import batch, produce_request

WAIT_S = 10.0
#: For the scenario that changes broker resources: a pair of brokers of its own (the values are the shared ones;
#: only the dictionary differs, which is what gives the scenario its own brokers).
DYNAMIC_SETTINGS = {**SHARED_GROUP_SETTINGS, "log.retention.check.interval.ms": "300000"}
#: Broker keys both brokers know, described by name (listeners and log.dirs differ by port and path).
BROKER_KEYS = [
    "auto.create.topics.enable",
    "compression.gzip.level",
    "compression.type",
    "group.max.size",
    "log.cleaner.backoff.ms",
    "log.cleanup.policy",
    "log.retention.bytes",
    "log.retention.hours",
    "log.retention.ms",
    "log.roll.hours",
    "log.roll.ms",
    "log.segment.bytes",
    "log.segment.delete.delay.ms",
    "message.max.bytes",
    "min.insync.replicas",
    "num.partitions",
    "transaction.partition.verification.enable",
]


def _view(result: Any) -> dict[str, Any]:
    """One DescribeConfigs result as plain data: entries sorted by name, documentation as present or not."""
    entries = []
    for entry in sorted(result.configs, key=lambda e: e.name):
        data = plain(entry)
        data["documentation"] = None if entry.documentation is None else bool(entry.documentation)
        entries.append(data)
    return {**plain(result), "configs": entries}


async def describe(
    s: Session,
    conn: Conn,
    resource_type: int,
    name: str,
    step: str,
    *,
    keys: list[str] | None = None,
    version: int = 4,
    synonyms: bool = True,
    documentation: bool = False,
    until: Callable[[dict[str, str | None]], bool] | None = None,
) -> None:
    """Record one resource's description; with ``until``, ask again (a while at most) until its values pass it."""
    request = describe_request(resource_type, name, keys, synonyms, documentation and version >= 3)
    deadline = time.monotonic() + WAIT_S
    while True:
        answer = await ask(conn, ApiKey.DESCRIBE_CONFIGS, version, request)
        if answer is None:
            s.note(step, {"closed": True})
            return
        [result] = answer.results
        values = {entry.name: entry.value for entry in result.configs}
        if until is None or until(values) or time.monotonic() > deadline:
            s.note(step, _view(result))
            return
        await s.sleep_ms(100)


def _topic_request(
    name: str, configs: list[tuple[str, str | None]], validate_only: bool = False
) -> CreateTopicsRequest:
    topic = CreatableTopic(
        name=name,
        num_partitions=1,
        replication_factor=1,
        configs=[CreatableTopicConfig(name=k, value=v) for k, v in configs],
    )
    return CreateTopicsRequest(topics=[topic], timeout_ms=10_000, validate_only=validate_only)


def _created_view(answer: Any) -> Any:
    [topic] = answer.topics
    data = plain(topic)
    if topic.configs:
        data["configs"] = sorted(data["configs"], key=lambda c: c["name"])
    return data


async def create(
    s: Session, conn: Conn, name: str, configs: list[tuple[str, str | None]], step: str, *, version: int = 7
) -> None:
    """CreateTopics with configs (recorded, the echoed configs sorted), then wait until Metadata knows the topic."""
    answer = await ask(conn, ApiKey.CREATE_TOPICS, version, _topic_request(name, configs))
    s.note(step, None if answer is None else _created_view(answer))
    probe = MetadataRequest(topics=[MetadataRequestTopic(name=name)], allow_auto_topic_creation=False)
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        known = await ask(conn, ApiKey.METADATA, 12, probe)
        if known is not None and known.topics and known.topics[0].partitions:
            return
        await s.sleep_ms(50)


async def alter_configs(
    conn: Conn,
    resource_type: int,
    name: str,
    configs: list[tuple[str, str | None]],
    step: str,
    *,
    version: int = 2,
    validate_only: bool = False,
) -> Any:
    body = alter_request(resource_type, name, configs, validate_only)
    return await conn.call(ApiKey.ALTER_CONFIGS, version, body, step)


async def incremental_alter(
    conn: Conn,
    resource_type: int,
    name: str,
    ops: list[tuple[str, int, str | None]],
    step: str,
    *,
    version: int = 1,
    validate_only: bool = False,
) -> Any:
    body = incremental_request(resource_type, name, ops, validate_only)
    return await conn.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, version, body, step)


def _shows(**wanted: str | None) -> Callable[[dict[str, str | None]], bool]:
    return lambda values: all(values.get(name.replace("_", ".")) == value for name, value in wanted.items())


@scenario("DescribeConfigs")
async def describe_topic_configs(s: Session) -> None:
    """A topic with overrides described at v1-v4 (types from v3, synonyms, documentation when asked), by key,
    with an empty key list; unknown and illegal topic names; an unknown resource type; BROKER_LOGGER's refusals."""
    conn = await s.connect()
    topic = s.name("dc-t")
    overrides = [
        ("retention.ms", "60000"),
        ("cleanup.policy", "compact, delete"),
        ("min.cleanable.dirty.ratio", "1e-5"),
    ]
    await create(s, conn, topic, [*overrides, ("internal.segment.bytes", "2000000")], "create with overrides")
    await describe(s, conn, TOPIC, topic, "v4 everything, with documentation", documentation=True)
    for version in (1, 2, 3):
        await describe(s, conn, TOPIC, topic, f"v{version} by key", keys=["retention.ms", "bogus"], version=version)
    await describe(s, conn, TOPIC, topic, "v4 without synonyms, empty key list", keys=[], synonyms=False)
    for name in (s.name("dc-missing"), "", "bad/name", ".", "a" * 250):
        await describe(s, conn, TOPIC, name, f"topic {name[:12]!r}")
    await describe(s, conn, 3, "x", "resource type 3")
    await describe(s, conn, BROKER_LOGGER, "", "BROKER_LOGGER ''")
    await describe(s, conn, BROKER_LOGGER, "2", "BROKER_LOGGER '2'")
    await describe(s, conn, BROKER_LOGGER, "x", "BROKER_LOGGER 'x'")


@scenario("DescribeConfigs")
async def describe_broker_configs(s: Session) -> None:
    """The broker resource: this node's keys (static, default, the formatter's cluster-wide min.insync.replicas)
    with synonyms and types, the cluster-default resource, and a wrong or non-numeric broker id."""
    conn = await s.connect()
    await describe(s, conn, BROKER, "1", "node 1, by key", keys=BROKER_KEYS)
    await describe(s, conn, BROKER, "1", "node 1, v1 by key", keys=BROKER_KEYS[:4], version=1)
    await describe(s, conn, BROKER, "", "the cluster defaults")
    await describe(s, conn, BROKER, "2", "broker 2")
    await describe(s, conn, BROKER, "x", "broker x")


TWICE = "the topic named twice"
#: AlterConfigs naming one resource twice: Kafka 4.4 means to refuse both (INVALID_REQUEST, "Each resource must appear
#: at most once.", as its IncrementalAlterConfigs does) but fails building that answer (an IllegalStateException on
#: a duplicate map key, in its log) and never answers; group-broker answers the refusal.
DUPLICATE_RESOURCE = (
    Known(
        f"{TWICE}.responses",
        [
            {
                "error_code": 42,
                "error_message": "Each resource must appear at most once.",
                "resource_type": 2,
                "resource_name": "ac-t-<run>",
            }
        ]
        * 2,
        "<missing>",
        "Kafka 4.4 fails building this refusal and never answers (a Kafka bug); group-broker answers it, as Kafka's "
        "IncrementalAlterConfigs does.",
    ),
    Known(f"{TWICE}.parked_ms", "<missing>", 2000, "The same request: Kafka's answer never comes."),
)


@scenario("AlterConfigs", known=DUPLICATE_RESOURCE)
async def alter_topic_configs(s: Session) -> None:
    """AlterConfigs v0-v2 on a topic: validate_only changes nothing, a change replaces the whole set of overrides
    (values shown normalised), and Kafka's refusals: bad or unknown keys and values, null, duplicates, an unknown,
    empty or illegal topic, tiered storage, a compaction-lag conflict, a resource type it does not alter."""
    conn = await s.connect()
    topic = s.name("ac-t")
    await create(s, conn, topic, [("retention.ms", "12345"), ("segment.ms", "99999")], "create")
    wanted = [("retention.bytes", " 77 "), ("cleanup.policy", "delete,delete"), ("min.cleanable.dirty.ratio", "1")]
    await alter_configs(conn, TOPIC, topic, wanted, "validate only", validate_only=True)
    await describe(s, conn, TOPIC, topic, "unchanged", keys=["retention.ms", "retention.bytes", "segment.ms"])
    await alter_configs(conn, TOPIC, topic, wanted, "replace the overrides", version=0)
    await describe(s, conn, TOPIC, topic, "replaced", until=_shows(retention_bytes="77"))
    refusals: list[tuple[str, str, list[tuple[str, str | None]]]] = [
        ("not a number", topic, [("retention.bytes", "abc")]),
        ("below the range", topic, [("retention.ms", "-5")]),
        ("segment.bytes under 1 MiB", topic, [("segment.bytes", "1000")]),
        ("unknown key before a bad value", topic, [("retention.ms", "abc"), ("bogus", "1")]),
        ("null value", topic, [("retention.ms", None)]),
        ("duplicate keys", topic, [("retention.ms", "1"), ("retention.ms", "2")]),
        ("list entry", topic, [("cleanup.policy", "compact,bogus")]),
        ("empty list entry", topic, [("cleanup.policy", "delete,")]),
        ("double above 1", topic, [("min.cleanable.dirty.ratio", "2")]),
        ("gzip level", topic, [("compression.gzip.level", "0")]),
        ("throttled replicas", topic, [("leader.replication.throttled.replicas", "0:1,*")]),
        ("tiered storage", topic, [("remote.storage.enable", "true")]),
        ("lag conflict", topic, [("min.compaction.lag.ms", "100"), ("max.compaction.lag.ms", "50")]),
        ("unknown topic", s.name("ac-missing"), [("retention.ms", "1")]),
        ("unknown topic, bad key", s.name("ac-missing"), [("bogus", "1")]),
        ("default topic", "", [("retention.ms", "1")]),
        ("illegal topic", "bad/name", [("retention.ms", "1")]),
    ]
    for version, (what, name, configs) in enumerate(refusals):
        await alter_configs(conn, TOPIC, name, configs, f"v{version % 3}: {what}", version=version % 3)
    await alter_configs(conn, BROKER_LOGGER, "1", [("root", "DEBUG")], "BROKER_LOGGER")
    await alter_configs(conn, 3, "x", [("a", "b")], "resource type 3")
    await alter_configs(conn, TOPIC, topic, [], "clear every override", version=1)
    await describe(s, conn, TOPIC, topic, "cleared", keys=["retention.bytes"], until=_shows(retention_bytes="-1"))
    twice = alter_request_of([(TOPIC, topic, [("retention.ms", "1000")]), (TOPIC, topic, [("retention.ms", "2")])])
    other = await s.connect("duplicates")  # Kafka never answers this one (see DUPLICATE_RESOURCE)
    await other.parked(other.send(ApiKey.ALTER_CONFIGS, 2, twice), TWICE, 2000)


@scenario("IncrementalAlterConfigs")
async def incremental_alter_topic_configs(s: Session) -> None:
    """IncrementalAlterConfigs v0-v1 on a topic: APPEND from the default, APPEND what is there, SUBTRACT (unknown
    items ignored) down to an empty list, SET and DELETE (an unset key too), validate_only, and the refusals:
    APPEND/SUBTRACT on non-lists, bad values, an unknown operation, null, duplicates, an unknown topic, the topic
    named twice in one request."""
    conn = await s.connect()
    topic = s.name("ia-t")
    await create(s, conn, topic, [], "create")
    steps: list[tuple[str, list[tuple[str, int, str | None]], str]] = [
        ("append compact", [("cleanup.policy", APPEND, "compact")], "delete,compact"),
        ("append both again", [("cleanup.policy", APPEND, "delete,compact")], "delete,compact"),
        ("subtract compact and bogus", [("cleanup.policy", SUBTRACT, "compact,bogus")], "delete"),
        ("subtract delete", [("cleanup.policy", SUBTRACT, "delete")], ""),
    ]
    for version, (what, ops, shown) in enumerate(steps):
        await incremental_alter(conn, TOPIC, topic, ops, f"v{version % 2}: {what}", version=version % 2)
        await describe(
            s, conn, TOPIC, topic, f"after {what}", keys=["cleanup.policy"], until=_shows(cleanup_policy=shown)
        )
    mixed = [("retention.ms", SET, "5000"), ("bogus", DELETE, None), ("cleanup.policy", DELETE, "ignored")]
    await incremental_alter(conn, TOPIC, topic, mixed, "set one, delete an unset and a set key")
    await describe(
        s,
        conn,
        TOPIC,
        topic,
        "after the mix",
        keys=["retention.ms", "cleanup.policy"],
        until=_shows(retention_ms="5000"),
    )
    await incremental_alter(conn, TOPIC, topic, [("retention.ms", DELETE, None)], "validate only", validate_only=True)
    refusals: list[tuple[str, str, list[tuple[str, int, str | None]]]] = [
        ("append to a long", topic, [("retention.ms", APPEND, "5")]),
        ("subtract from a long", topic, [("retention.ms", SUBTRACT, "5")]),
        ("append to an unknown key", topic, [("bogus", APPEND, "5")]),
        ("append a bad item", topic, [("cleanup.policy", APPEND, "bogus")]),
        ("append an empty item", topic, [("cleanup.policy", APPEND, "")]),
        ("set an unknown key", topic, [("bogus", SET, "1")]),
        ("set a bad value", topic, [("retention.ms", SET, "abc")]),
        ("set null", topic, [("retention.ms", SET, None)]),
        ("duplicate keys", topic, [("retention.ms", SET, "1"), ("retention.ms", DELETE, None)]),
        ("unknown operation", topic, [("retention.ms", 4, "5")]),
        ("unknown operation after a bad set", topic, [("bogus", SET, "1"), ("retention.ms", 4, "5")]),
        ("unknown topic", s.name("ia-missing"), [("retention.ms", DELETE, None)]),
        ("unknown topic, append to a long", s.name("ia-missing"), [("retention.ms", APPEND, "1")]),
        ("default topic", "", [("retention.ms", SET, "1")]),
    ]
    for version, (what, name, ops) in enumerate(refusals):
        await incremental_alter(conn, TOPIC, name, ops, f"v{version % 2}: {what}", version=version % 2)
    twice = [(TOPIC, topic, [("retention.ms", SET, "1000")]), (TOPIC, topic, [("retention.ms", SET, "2")])]
    await conn.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, incremental_request_of(twice), "the topic named twice")
    await describe(s, conn, TOPIC, topic, "in the end", keys=["retention.ms", "cleanup.policy"])


@scenario("CreateTopics")
async def create_topics_configs(s: Session) -> None:
    """CreateTopics v2-v7 with configs: validate_only (nothing created, configs echoed from v5), null, unknown and
    bad values, tiered storage, a lag conflict; the echoed configs and their sources from v5."""
    conn = await s.connect()
    cases: list[tuple[str, list[tuple[str, str | None]]]] = [
        ("null value", [("retention.ms", None)]),
        ("unknown key", [("bogus", "1")]),
        ("bad value", [("retention.ms", "abc")]),
        ("segment.bytes under 1 MiB", [("segment.bytes", "1000")]),
        ("tiered storage", [("remote.storage.enable", "true")]),
        ("lag conflict", [("min.compaction.lag.ms", "100"), ("max.compaction.lag.ms", "50")]),
    ]
    for version in (2, 5, 7):
        for what, configs in cases:
            body = _topic_request(s.name(f"ct-bad-{version}"), configs)
            answer = await ask(conn, ApiKey.CREATE_TOPICS, version, body)
            s.note(f"v{version}: {what}", None if answer is None else _created_view(answer))
        checked = _topic_request(s.name(f"ct-vo-{version}"), [("retention.ms", "5")], validate_only=True)
        answer = await ask(conn, ApiKey.CREATE_TOPICS, version, checked)
        s.note(f"v{version}: validate only", None if answer is None else _created_view(answer))
        await create(s, conn, s.name(f"ct-{version}"), [("retention.ms", "5")], f"v{version}: created", version=version)
    await describe(s, conn, TOPIC, s.name("ct-vo-7"), "the validated topic does not exist")


@scenario("ListConfigResources")
async def list_config_resources(s: Session) -> None:
    """ListConfigResources v0 (client-metrics resources: none) and v1 for every type, one type, a repeated type,
    the group and client-metrics types (none without plugins), an unknown type; topics of this run only."""
    conn = await s.connect()
    topic = s.name("lcr-t")
    await create(s, conn, topic, [], "create")
    for version, types in (
        (0, []),
        (1, []),
        (1, [TOPIC]),
        (1, [BROKER, BROKER]),
        (1, [16, 32]),
        (1, [3]),
        (1, [2, 99]),
    ):
        answer = await ask(
            conn, ApiKey.LIST_CONFIG_RESOURCES, version, ListConfigResourcesRequest(resource_types=types)
        )
        if answer is None:
            s.note(f"v{version} {types}", {"closed": True})
            continue
        mine = [plain(r) for r in answer.config_resources if r.resource_type != TOPIC or r.resource_name == topic]
        s.note(f"v{version} {types}", {"error_code": answer.error_code, "resources": sorted(mine, key=str)})


def _produce_view(answer: Any) -> Any:
    """A Produce answer with the numbers in record error messages hidden (they hold the brokers' clocks)."""
    [topic] = answer.responses
    [partition] = topic.partition_responses
    data = plain(partition)
    for error in data["record_errors"]:
        error["batch_index_error_message"] = re.sub(r"-?\d+", "<n>", error["batch_index_error_message"])
    return data


async def _produce(s: Session, conn: Conn, topic: str, records: bytes, step: str) -> None:
    answer = await ask(conn, ApiKey.PRODUCE, 9, produce_request(topic, records))
    s.note(step, None if answer is None else _produce_view(answer))


@scenario("AlterConfigs")
async def topic_configs_take_effect(s: Session) -> None:
    """A change of max.message.bytes refuses a bigger batch (MESSAGE_TOO_LARGE); message.timestamp.before.max.ms
    and the default after.max.ms refuse records outside their window (INVALID_TIMESTAMP, every record listed)."""
    conn = await s.connect()
    topic = s.name("effect-t")
    await create(s, conn, topic, [], "create")
    now = int(time.time() * 1000)
    await _produce(s, conn, topic, batch(b"x" * 500, timestamp=now), "a 500-byte batch")
    await alter_configs(conn, TOPIC, topic, [("max.message.bytes", "200")], "max.message.bytes 200")
    await describe(s, conn, TOPIC, topic, "changed", keys=["max.message.bytes"], until=_shows(max_message_bytes="200"))
    await _produce(s, conn, topic, batch(b"x" * 500, timestamp=now), "the 500-byte batch again")
    window = [("message.timestamp.before.max.ms", "60000")]
    await alter_configs(conn, TOPIC, topic, window, "a one-minute window into the past")
    await describe(
        s, conn, TOPIC, topic, "window set", keys=[window[0][0]], until=_shows(message_timestamp_before_max_ms="60000")
    )
    old = batch(b"a", b"b", b"c", timestamp=now - 180_000, timestamp_step=60_000)
    await _produce(s, conn, topic, old, "records 3, 2 and 1 minutes old")
    await _produce(s, conn, topic, batch(b"v", timestamp=now + 7_200_000), "a record two hours ahead")
    await _produce(s, conn, topic, batch(b"v", timestamp=now), "a record of now")


@scenario("AlterConfigs", settings=DYNAMIC_SETTINGS)
async def broker_dynamic_configs(s: Session) -> None:
    """Broker resources with both APIs: this node's and the cluster defaults (the formatter's min.insync.replicas
    among them), shown with their sources and synonyms and reaching a topic without an override (a smaller
    message.max.bytes refuses its batch); Kafka's refusals; every change undone at the end."""
    conn = await s.connect()
    topic = s.name("bd-t")
    await create(s, conn, topic, [], "create")
    await alter_configs(
        conn, BROKER, "1", [("log.retention.ms", "8888"), ("bogus.key", "x")], "node: retention, unknown key"
    )
    await describe(
        s,
        conn,
        BROKER,
        "1",
        "node after",
        keys=["log.retention.ms", "bogus.key"],
        until=_shows(log_retention_ms="8888"),
    )
    cluster = [("min.insync.replicas", "1"), ("message.max.bytes", "300"), ("log.retention.bytes", "99999999")]
    await alter_configs(conn, BROKER, "", cluster, "cluster: message.max.bytes, retention.bytes")
    await describe(s, conn, BROKER, "", "cluster after", until=_shows(message_max_bytes="300"))
    await describe(
        s,
        conn,
        TOPIC,
        topic,
        "the topic follows",
        keys=["retention.ms", "retention.bytes", "max.message.bytes"],
        until=_shows(max_message_bytes="300"),
    )
    await _produce(s, conn, topic, batch(b"x" * 500, timestamp=int(time.time() * 1000)), "a 500-byte batch")
    await incremental_alter(
        conn,
        BROKER,
        "1",
        [("log.cleanup.policy", APPEND, "compact"), ("log.retention.ms", DELETE, None)],
        "node: append, delete",
    )
    await describe(
        s,
        conn,
        BROKER,
        "1",
        "node after the increments",
        keys=["log.cleanup.policy", "log.retention.ms"],
        until=_shows(log_cleanup_policy="delete,compact"),
    )
    alter_refusals: list[tuple[str, str, list[tuple[str, str | None]]]] = [
        ("cluster without min.insync.replicas", "", [("message.max.bytes", "300")]),
        ("node min.insync.replicas", "1", [("min.insync.replicas", "2")]),
        ("static keys", "1", [("log.retention.hours", "1"), ("node.id", "2"), ("num.partitions", "1")]),
        ("static key with a bad value", "1", [("log.retention.hours", "abc")]),
        ("bad value", "1", [("log.retention.ms", "abc")]),
        ("below the range", "1", [("log.cleaner.backoff.ms", "-1")]),
        ("double above 1", "1", [("log.cleaner.min.cleanable.ratio", "2")]),
        ("roll.ms 0", "1", [("log.roll.ms", "0")]),
        ("null", "1", [("log.retention.ms", None)]),
        ("duplicates", "x", [("a", "b"), ("a", "c")]),
        ("broker 2", "2", [("log.retention.ms", "1")]),
        ("broker x", "x", [("log.retention.ms", "1")]),
    ]
    for what, name, configs in alter_refusals:
        await alter_configs(conn, BROKER, name, configs, f"refused: {what}", validate_only=True)
    incremental_refusals: list[tuple[str, str, list[tuple[str, int, str | None]]]] = [
        ("append to a long", "1", [("log.retention.hours", APPEND, "1")]),
        ("append to an unknown key", "1", [("bogus", APPEND, "1")]),
        ("unknown operation", "1", [("log.retention.ms", 4, "1")]),
        ("unknown operation, broker x", "x", [("log.retention.ms", 4, "1")]),
        ("append an empty item", "1", [("log.cleanup.policy", APPEND, "")]),
        ("append a bad item", "1", [("log.cleanup.policy", APPEND, "bogus")]),
        ("delete node min.insync.replicas", "1", [("min.insync.replicas", DELETE, None)]),
        ("delete cluster min.insync.replicas", "", [("min.insync.replicas", DELETE, None)]),
        ("set a static key", "1", [("log.retention.hours", SET, "1")]),
        ("roll.ms 0 as the cluster default", "", [("log.roll.ms", SET, "0")]),
    ]
    for what, name, ops in incremental_refusals:
        await incremental_alter(conn, BROKER, name, ops, f"refused: {what}", validate_only=True)
    await incremental_alter(conn, BROKER, "1", [("log.retention.hours", DELETE, None)], "delete a static key: allowed")
    await alter_configs(conn, BROKER, "1", [], "node: back to none")
    await alter_configs(conn, BROKER, "", [("min.insync.replicas", "1")], "cluster: back to the formatter's")
    await describe(s, conn, BROKER, "", "cluster in the end", until=lambda values: "message.max.bytes" not in values)
    await describe(
        s,
        conn,
        BROKER,
        "1",
        "node in the end",
        keys=["log.retention.ms", "log.cleanup.policy", "bogus.key"],
        until=_shows(log_cleanup_policy="delete"),
    )
