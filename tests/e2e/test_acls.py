"""ACLs with real clients, on group-broker and (``--e2e-broker=kafka``) on Kafka 4.4, both with the
StandardAuthorizer: kafka-python's ACL admin flow (create, describe and delete with filters), and consumers of
kafka-python, aiokafka, confluent-kafka and kafkajs that lack Group READ or Topic READ get the client's
GROUP_/TOPIC_AUTHORIZATION_FAILED error, as each client surfaces it from Kafka.

Every client here connects over plaintext, so it is User:ANONYMOUS. With ``allow.everyone.if.no.acl.found`` true a
resource nobody has ACLs on is open (the setup creates and fills the topics that way); granting a topic or a group
to another user (User:owner) then takes it away from ANONYMOUS, which is the consumer that lacks READ.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    NewTopic,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafka.errors import GroupAuthorizationFailedError, InvalidRequestError, TopicAuthorizationFailedError

from tests.e2e.kafkajs_client import JS, node
from tests.e2e.scenario import unique
from tests.e2e.targets import CONSUMER_PROTOCOL_SETTINGS, bootstrap_with
from tests.reference.settings import STANDARD_AUTHORIZER

pytestmark = pytest.mark.integration

OWNER = "User:owner"
SETTINGS = {
    **CONSUMER_PROTOCOL_SETTINGS,
    "authorizer.class.name": STANDARD_AUTHORIZER,
    "allow.everyone.if.no.acl.found": "true",
}
WAIT_S = 20.0


@dataclass(frozen=True)
class Denied:
    """Where the consumers are refused: ``topic`` is open but ``group`` is owned by another user, and
    ``denied_topic`` is owned by another user (any group of this run is open)."""

    bootstrap: str
    topic: str
    denied_topic: str
    group: str


@pytest.fixture(scope="module")
def acl_bootstrap(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with bootstrap_with(request, tmp_path_factory, SETTINGS) as bootstrap:
        yield bootstrap


def _owned(resource_type: ResourceType, name: str) -> ACL:
    return ACL(OWNER, "*", ACLOperation.ALL, ACLPermissionType.ALLOW, ResourcePattern(resource_type, name))


def _mine(admin: KafkaAdminClient, principal: str) -> list[ACL]:
    acls, error = admin.describe_acls(
        ACLFilter(
            principal,
            "*",
            ACLOperation.ANY,
            ACLPermissionType.ANY,
            ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY),
        )
    )
    assert error is not None and error.errno == 0, error
    return acls


def _until(condition: Callable[[], bool], what: str) -> None:
    """Kafka applies ACL changes to its authorizer a moment after answering them: wait until they show."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"not seen within {WAIT_S}s: {what}"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def denied(acl_bootstrap: str) -> Iterator[Denied]:
    topic, denied_topic, group = unique("acl-open-t"), unique("acl-denied-t"), unique("acl-denied-g")
    owner = unique("User:owner")
    admin = KafkaAdminClient(bootstrap_servers=acl_bootstrap, client_id="acl-setup")
    admin.create_topics([NewTopic(t, 1, 1) for t in (topic, denied_topic)])
    producer = KafkaProducer(bootstrap_servers=acl_bootstrap)
    for t in (topic, denied_topic):
        producer.send(t, b"v").get(timeout=30)
    producer.close()
    acls = [
        ACL(owner, "*", ACLOperation.ALL, ACLPermissionType.ALLOW, ResourcePattern(ResourceType.TOPIC, denied_topic)),
        ACL(owner, "*", ACLOperation.ALL, ACLPermissionType.ALLOW, ResourcePattern(ResourceType.GROUP, group)),
    ]
    result = admin.create_acls(acls)
    assert result["failed"] == [], result
    _until(lambda: len(_mine(admin, owner)) == 2, "the owner's ACLs")
    yield Denied(acl_bootstrap, topic, denied_topic, group)
    admin.close()


def test_kafka_python_acl_admin_flow(acl_bootstrap: str) -> None:
    """create_acls (one invalid refused alone), describe_acls by principal and by resource, delete_acls with two
    filters, each reporting what it matched, and nothing left."""
    admin = KafkaAdminClient(bootstrap_servers=acl_bootstrap, client_id="acl-admin")
    alice, topic, group = unique("User:alice"), unique("acl-admin-t"), unique("acl-admin-g")
    read = ACL(alice, "*", ACLOperation.READ, ACLPermissionType.ALLOW, ResourcePattern(ResourceType.TOPIC, topic))
    deny = ACL(
        alice,
        "*",
        ACLOperation.ALL,
        ACLPermissionType.DENY,
        ResourcePattern(ResourceType.GROUP, group[:-2], ACLResourcePatternType.PREFIXED),
    )
    invalid = ACL(alice, "", ACLOperation.READ, ACLPermissionType.ALLOW, ResourcePattern(ResourceType.TOPIC, topic))
    result = admin.create_acls([read, deny, invalid])
    assert sorted(a.resource_pattern.resource_type for a in result["succeeded"]) == [
        ResourceType.TOPIC,
        ResourceType.GROUP,
    ]
    assert result["failed"] == [InvalidRequestError]  # kafka-python keeps only the error class
    _until(lambda: len(_mine(admin, alice)) == 2, "alice's ACLs")
    by_resource, described = admin.describe_acls(
        ACLFilter(
            None,
            None,
            ACLOperation.ANY,
            ACLPermissionType.ANY,
            ResourcePatternFilter(ResourceType.GROUP, group, ACLResourcePatternType.MATCH),
        )
    )
    assert described.errno == 0
    assert [(a.principal, a.operation, a.permission_type) for a in by_resource] == [
        (alice, ACLOperation.ALL, ACLPermissionType.DENY)
    ]
    filters = [
        ACLFilter(
            alice,
            None,
            ACLOperation.READ,
            ACLPermissionType.ANY,
            ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY),
        ),
        ACLFilter(
            alice,
            None,
            ACLOperation.ANY,
            ACLPermissionType.DENY,
            ResourcePatternFilter(ResourceType.GROUP, None, ACLResourcePatternType.ANY),
        ),
    ]
    deleted = admin.delete_acls(filters)
    assert [[a.operation for a in matches] for _, matches, _ in deleted] == [[ACLOperation.READ], [ACLOperation.ALL]]
    _until(lambda: _mine(admin, alice) == [], "alice's ACLs gone")
    admin.close()


def test_kafka_python_consumer_lacking_group_read(denied: Denied) -> None:
    consumer = KafkaConsumer(
        denied.topic, bootstrap_servers=denied.bootstrap, group_id=denied.group, auto_offset_reset="earliest"
    )
    with pytest.raises(GroupAuthorizationFailedError):
        for _ in range(50):
            consumer.poll(timeout_ms=200)
    consumer.close()


def test_kafka_python_consumer_lacking_topic_read(denied: Denied) -> None:
    """kafka-python raises the error from a fetch (a subscription's metadata refusal only reaches its listener)."""
    consumer = KafkaConsumer(
        bootstrap_servers=denied.bootstrap, group_id=unique("acl-open-g"), auto_offset_reset="earliest"
    )
    consumer.assign([TopicPartition(denied.denied_topic, 0)])
    with pytest.raises(TopicAuthorizationFailedError):
        for _ in range(50):
            consumer.poll(timeout_ms=200)
    consumer.close()


async def _aiokafka_error(bootstrap: str, topic: str, group: str) -> Exception:
    from aiokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest")
    try:
        await consumer.start()
        await asyncio.wait_for(consumer.getone(), 20)
    except Exception as exc:
        return exc
    finally:
        await consumer.stop()
    raise AssertionError("aiokafka consumed without the ACL")


async def test_aiokafka_consumer_lacking_group_read(denied: Denied) -> None:
    from aiokafka.errors import GroupAuthorizationFailedError as AioGroupAuthorizationFailed

    error = await _aiokafka_error(denied.bootstrap, denied.topic, denied.group)
    assert isinstance(error, AioGroupAuthorizationFailed), repr(error)


async def test_aiokafka_consumer_lacking_topic_read(denied: Denied) -> None:
    from aiokafka.errors import TopicAuthorizationFailedError as AioTopicAuthorizationFailed

    error = await _aiokafka_error(denied.bootstrap, denied.denied_topic, unique("acl-open-g"))
    assert isinstance(error, AioTopicAuthorizationFailed), repr(error)


def _confluent_error(bootstrap: str, topic: str, group: str) -> object:
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is not None:
                return message.error()
            assert message is None, "confluent-kafka consumed without the ACL"
        raise AssertionError("confluent-kafka reported no error")
    finally:
        consumer.close()


def test_confluent_consumer_lacking_group_read(denied: Denied) -> None:
    from confluent_kafka import KafkaError

    error = _confluent_error(denied.bootstrap, denied.topic, denied.group)
    assert error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED, error  # type: ignore[attr-defined]


def test_confluent_consumer_lacking_topic_read(denied: Denied) -> None:
    from confluent_kafka import KafkaError

    error = _confluent_error(denied.bootstrap, denied.denied_topic, unique("acl-open-g"))
    assert error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, error  # type: ignore[attr-defined]


def _kafkajs_error(bootstrap: str, topic: str, group: str) -> dict[str, object]:
    done = subprocess.run(
        [node(), str(JS / "acl_denied.js"), bootstrap, topic, group],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_kafkajs_consumer_lacking_group_read(denied: Denied) -> None:
    """kafkajs retries FindCoordinator's GROUP_AUTHORIZATION_FAILED, then gives up with its own error."""
    error = _kafkajs_error(denied.bootstrap, denied.topic, denied.group)
    assert error == {
        "name": "KafkaJSGroupCoordinatorNotFound",
        "retriable": False,
        "message": "Failed to find group coordinator",
    }


def test_kafkajs_consumer_lacking_topic_read(denied: Denied) -> None:
    error = _kafkajs_error(denied.bootstrap, denied.denied_topic, unique("acl-open-g"))
    assert error == {
        "name": "KafkaJSProtocolError",
        "type": "TOPIC_AUTHORIZATION_FAILED",
        "retriable": False,
        "message": "Not authorized to access topics: [Topic authorization failed]",
    }


def test_confluent_acl_admin_flow(acl_bootstrap: str) -> None:
    """confluent-kafka's AdminClient: create_acls (an invalid one fails alone), describe_acls with a MATCH filter,
    delete_acls reporting what it removed (aiokafka's admin client has no ACL calls)."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        AdminClient,
        ResourcePatternType,
    )
    from confluent_kafka.admin import ResourceType as CResourceType

    admin = AdminClient({"bootstrap.servers": acl_bootstrap})
    carol, topic = unique("User:carol"), unique("acl-confluent-t")
    good = AclBinding(
        CResourceType.TOPIC, topic, ResourcePatternType.LITERAL, carol, "*", AclOperation.WRITE, AclPermissionType.ALLOW
    )
    bad = AclBinding(
        CResourceType.TOPIC, topic, ResourcePatternType.LITERAL, carol, "10.0.0.0/99", AclOperation.READ,
        AclPermissionType.ALLOW,
    )  # fmt: skip
    futures = admin.create_acls([good, bad], request_timeout=30)
    futures[good].result()
    with pytest.raises(KafkaException, match="Invalid CIDR notation"):
        futures[bad].result()
    match = AclBindingFilter(
        CResourceType.TOPIC, topic, ResourcePatternType.MATCH, None, None, AclOperation.ANY, AclPermissionType.ANY
    )

    def described() -> list[object]:
        return list(admin.describe_acls(match, request_timeout=30).result())

    _until(lambda: described() == [good], "carol's ACL")
    deleted = admin.delete_acls([match], request_timeout=30)
    assert list(deleted[match].result()) == [good]
    _until(lambda: described() == [], "carol's ACL gone")
