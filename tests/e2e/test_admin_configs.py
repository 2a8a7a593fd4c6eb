"""Dynamic configs through the admin clients people use: kafka-python, aiokafka, confluent-kafka (librdkafka) and
kafkajs create topics with configs, describe them (types, sources), alter them (AlterConfigs and
IncrementalAlterConfigs, validate_only) and see a change take effect (a smaller max.message.bytes refuses a record).

Every test runs against group-broker and, with `--e2e-broker=kafka`, against Kafka 4.4 itself (`e2e_target`). Kafka
applies a config change through its metadata log, so a describe right after an alter may still show the old value:
the tests wait for the change to show, as an operator's tool would.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin import NewTopic as AioNewTopic
from aiokafka.admin.config_resource import ConfigResource as AioConfigResource
from aiokafka.admin.config_resource import ConfigResourceType as AioResourceType
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ConfigSource, NewTopic
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource as KpConfigResource
from kafka.admin import ConfigResourceType as KpResourceType
from kafka.admin import NewTopic as KpNewTopic

from tests.e2e.kafkajs_client import harness
from tests.e2e.scenario import unique
from tests.e2e.targets import E2ETarget
from tests.support.broker_process import wait_until

pytestmark = pytest.mark.integration

WAIT_S = 30.0
TOPIC_RESOURCE = 2  # kafkajs's ConfigResourceTypes.TOPIC


def _eventually(check: Callable[[], bool], what: str) -> None:
    wait_until(check, WAIT_S, what=what)


# -- kafka-python ---------------------------------------------------------------------------------------------------


@pytest.fixture
def kp_admin(e2e_target: E2ETarget) -> Iterator[KafkaAdminClient]:
    client = KafkaAdminClient(bootstrap_servers=e2e_target.bootstrap)
    yield client
    client.close()


def _kp_topic_configs(admin: KafkaAdminClient, topic: str) -> dict[str, Any]:
    described = admin.describe_configs([KpConfigResource(KpResourceType.TOPIC, topic)], config_filter="all")
    return described["topic"][topic]  # type: ignore[no-any-return]


def test_kafka_python_describes_kafkas_types_and_alters_both_ways(kp_admin: KafkaAdminClient) -> None:
    """kafka-python reads each key's type from DescribeConfigs v3+ (retention.bytes is a LONG), alters with
    IncrementalAlterConfigs (its default) and with AlterConfigs, and sees the overrides' sources."""
    topic = unique("kp-configs")
    kp_admin.create_topics([KpNewTopic(topic, 1, 1, topic_configs={"retention.ms": "60000"})])
    _eventually(lambda: topic in kp_admin.list_topics(), "the topic to be listed")
    configs = _kp_topic_configs(kp_admin, topic)
    assert configs["retention.bytes"]["config_type"] == "LONG"
    assert configs["cleanup.policy"]["config_type"] == "LIST"
    assert configs["retention.ms"]["value"] == "60000"
    assert configs["retention.ms"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"
    assert configs["cleanup.policy"]["config_source"] == "DEFAULT_CONFIG"

    answer = kp_admin.alter_configs([KpConfigResource(KpResourceType.TOPIC, topic, {"retention.bytes": "1000"})])
    assert answer == {"topic": {topic: "OK"}}
    _eventually(lambda: _kp_topic_configs(kp_admin, topic)["retention.bytes"]["value"] == "1000", "retention.bytes")
    assert _kp_topic_configs(kp_admin, topic)["retention.ms"]["value"] == "60000"  # incremental: kept

    legacy = KpConfigResource(KpResourceType.TOPIC, topic, {"max.message.bytes": "5000"})
    assert kp_admin.alter_configs([legacy], incremental=False) == {"topic": {topic: "OK"}}
    _eventually(lambda: _kp_topic_configs(kp_admin, topic)["max.message.bytes"]["value"] == "5000", "max.message.bytes")
    modified = kp_admin.describe_configs([KpConfigResource(KpResourceType.TOPIC, topic)])["topic"][topic]
    # kafka-python carries the other overrides along with AlterConfigs, which replaces the whole set
    assert {name: entry["value"] for name, entry in modified.items()} == {
        "retention.ms": "60000",
        "retention.bytes": "1000",
        "max.message.bytes": "5000",
    }


# -- aiokafka -------------------------------------------------------------------------------------------------------


async def test_aiokafka_creates_alters_and_describes(e2e_target: E2ETarget) -> None:
    """aiokafka's create_topics gets a null error message on success, alter_configs (AlterConfigs) replaces the
    overrides, describe_configs shows them."""
    topic = unique("aio-configs")
    admin = AIOKafkaAdminClient(bootstrap_servers=e2e_target.bootstrap)
    await admin.start()
    try:
        created = await admin.create_topics([AioNewTopic(topic, 1, 1, topic_configs={"segment.ms": "99999"})])
        [(name, code, message)] = [(t[0], t[1], t[2]) for t in created.topic_errors]
        assert (name, code, message) == (topic, 0, None)
        resource = AioConfigResource(AioResourceType.TOPIC, topic, {"retention.ms": "5000"})
        [answer] = [r for r in await admin.alter_configs([resource]) if r.resources]
        assert [(r[0], r[1]) for r in answer.resources] == [(0, None)]

        async def overrides() -> dict[str, str]:
            [response] = await admin.describe_configs([AioConfigResource(AioResourceType.TOPIC, topic)])
            [(_, _, _, _, entries)] = response.resources
            return {e[0]: e[1] for e in entries if e[3] == 1}  # (name, value, read_only, config_source, ...)

        for _ in range(int(WAIT_S / 0.1)):
            if await overrides() == {"retention.ms": "5000"}:  # AlterConfigs dropped segment.ms
                break
            await asyncio.sleep(0.1)
        else:
            pytest.fail(f"aiokafka never saw the altered overrides: {await overrides()}")
    finally:
        await admin.close()


# -- confluent-kafka ------------------------------------------------------------------------------------------------


@pytest.fixture
def ck_admin(e2e_target: E2ETarget) -> AdminClient:
    return AdminClient({"bootstrap.servers": e2e_target.bootstrap})


def _ck_configs(admin: AdminClient, topic: str) -> dict[str, ConfigEntry]:
    [future] = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)]).values()
    return future.result(timeout=WAIT_S)  # type: ignore[no-any-return]


def test_confluent_validates_creates_and_alters_incrementally(ck_admin: AdminClient, e2e_target: E2ETarget) -> None:
    """librdkafka: CreateTopics validate_only creates nothing and refuses a bad config, IncrementalAlterConfigs
    APPENDs to a list and SETs a value, AlterConfigs replaces, and a smaller max.message.bytes refuses a record."""
    topic = unique("ck-configs")
    [checked] = ck_admin.create_topics(
        [NewTopic(topic, 1, 1, config={"retention.ms": "5000"})], validate_only=True
    ).values()
    assert checked.result(timeout=WAIT_S) is None
    [bad] = ck_admin.create_topics([NewTopic(topic, 1, 1, config={"retention.ms": "-5"})]).values()
    with pytest.raises(KafkaException) as refused:
        bad.result(timeout=WAIT_S)
    assert refused.value.args[0].code() == KafkaError.INVALID_CONFIG
    assert topic not in ck_admin.list_topics(timeout=WAIT_S).topics
    [made] = ck_admin.create_topics([NewTopic(topic, 1, 1)]).values()
    assert made.result(timeout=WAIT_S) is None

    entries = [
        ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND),
        ConfigEntry("max.message.bytes", "200", incremental_operation=AlterConfigOpType.SET),
    ]
    [future] = ck_admin.incremental_alter_configs(
        [ConfigResource("topic", topic, incremental_configs=entries)]
    ).values()
    assert future.result(timeout=WAIT_S) is None
    _eventually(lambda: _ck_configs(ck_admin, topic)["cleanup.policy"].value == "delete,compact", "the APPEND")
    assert _ck_configs(ck_admin, topic)["max.message.bytes"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value

    assert _big_record_refusal(e2e_target.bootstrap, topic) == KafkaError.MSG_SIZE_TOO_LARGE

    with pytest.warns(DeprecationWarning, match="alter_configs has been deprecated"):  # AlterConfigs, on purpose
        altered = ck_admin.alter_configs([ConfigResource("topic", topic, set_config={"retention.ms": "5000"})])
    [future] = altered.values()
    assert future.result(timeout=WAIT_S) is None
    _eventually(lambda: _ck_configs(ck_admin, topic)["max.message.bytes"].value == "1048588", "the replaced set")
    assert _ck_configs(ck_admin, topic)["retention.ms"].value == "5000"


def _big_record_refusal(bootstrap: str, topic: str) -> int:
    """The error code a 500-byte record gets once the change shows (the producer, and its threads, end here)."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    outcome: list[KafkaError | None] = []

    def refused() -> bool:
        producer.produce(topic, key=b"k", value=b"x" * 500, on_delivery=lambda error, _message: outcome.append(error))
        producer.flush(WAIT_S)
        return outcome[-1] is not None

    _eventually(refused, "a 500-byte record to be refused")
    error = outcome[-1]
    assert error is not None
    return int(error.code())


# -- kafkajs --------------------------------------------------------------------------------------------------------


def test_kafkajs_alters_and_describes(e2e_target: E2ETarget, tmp_path: Path) -> None:
    """kafkajs's alterConfigs (AlterConfigs, validateOnly too) and describeConfigs."""
    topic = unique("js-configs")
    with harness(e2e_target.bootstrap, tmp_path) as h:
        admin = h.rpc("admin.js", "admin")
        assert admin.call("createTopic", topic=topic, partitions=1) is True
        configs = {"retention.ms": "7000", "cleanup.policy": "compact"}
        checked = admin.call("alterConfigs", type=TOPIC_RESOURCE, name=topic, configs=configs, validateOnly=True)
        assert checked == [{"errorCode": 0, "errorMessage": None, "name": topic}]
        keys = ["retention.ms", "cleanup.policy", "retention.bytes"]

        def described() -> dict[str, Any]:
            return admin.call("describeConfigs", type=TOPIC_RESOURCE, name=topic, keys=keys)["configs"]  # type: ignore[no-any-return]

        assert described()["retention.ms"]["value"] == "604800000"  # validateOnly changed nothing
        answer = admin.call("alterConfigs", type=TOPIC_RESOURCE, name=topic, configs=configs)
        assert answer == [{"errorCode": 0, "errorMessage": None, "name": topic}]
        _eventually(lambda: described()["retention.ms"]["value"] == "7000", "the alteration to show")
        shown = described()
        assert shown["cleanup.policy"] == {"value": "compact", "source": 1, "readOnly": False, "isSensitive": False}
        assert (shown["retention.bytes"]["value"], shown["retention.bytes"]["source"]) == ("-1", 5)
