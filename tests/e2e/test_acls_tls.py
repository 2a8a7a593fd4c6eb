"""ACLs between two real principals over mutual TLS, on group-broker and (``--e2e-broker=kafka``) on Kafka 4.4:
``User:CN=admin`` is a super user and grants ``User:CN=alice`` READ on one topic and one group; alice (kafka-python)
consumes and commits there, and gets GroupAuthorizationFailedError in another group, TopicAuthorizationFailedError
on another topic, and ClusterAuthorizationFailedError when she tries to create an ACL herself.

``allow.everyone.if.no.acl.found`` is false (Kafka's default). Kafka's own broker reaches its controller over the
plaintext CONTROLLER listener as User:ANONYMOUS, so ANONYMOUS is a super user too; every client connection here
carries a certificate, so none of them is ANONYMOUS.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

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
from kafka.errors import ClusterAuthorizationFailedError, GroupAuthorizationFailedError, TopicAuthorizationFailedError

from tests.e2e.scenario import unique
from tests.e2e.targets import CONSUMER_PROTOCOL_SETTINGS, bootstrap_with
from tests.reference.settings import STANDARD_AUTHORIZER
from toolkit.certs import CertificateAuthority

pytestmark = pytest.mark.integration

WAIT_S = 20.0


@dataclass(frozen=True)
class Pki:
    """A CA and, per name, a client certificate and key (CN=<name>), as PEM files."""

    directory: Path

    def cert(self, name: str) -> Path:
        return self.directory / f"{name}.pem"

    def key(self, name: str) -> Path:
        return self.directory / f"{name}.key"

    @property
    def ca(self) -> Path:
        return self.directory / "ca.pem"

    def client(self, name: str) -> dict[str, object]:
        """kafka-python's settings for a client that presents ``name``'s certificate."""
        return {
            "security_protocol": "SSL",
            "ssl_cafile": str(self.ca),
            "ssl_certfile": str(self.cert(name)),
            "ssl_keyfile": str(self.key(name)),
        }


def _write_pki(directory: Path) -> Pki:
    ca = CertificateAuthority()
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "ca.pem").write_bytes(ca.cert_pem)
    for name, issued in (
        ("broker", ca.issue_broker()),
        ("admin", ca.issue_client("admin")),
        ("alice", ca.issue_client("alice")),
    ):
        (directory / f"{name}.pem").write_bytes(issued.cert_pem)
        (directory / f"{name}.key").write_bytes(issued.key_pem)
    return Pki(directory)


def _settings(pki: Pki) -> dict[str, str]:
    keystore = pki.directory / "keystore.pem"
    keystore.write_text(pki.key("broker").read_text() + pki.cert("broker").read_text())
    return {
        **CONSUMER_PROTOCOL_SETTINGS,
        "listener.security.protocol.map": "PLAINTEXT:SSL,CONTROLLER:PLAINTEXT",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(keystore),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(pki.ca),
        "ssl.client.auth": "required",
        "authorizer.class.name": STANDARD_AUTHORIZER,
        "super.users": "User:CN=admin;User:ANONYMOUS",
        "allow.everyone.if.no.acl.found": "false",
    }


@dataclass(frozen=True)
class Target:
    bootstrap: str
    pki: Pki


@pytest.fixture(scope="module")
def target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    pki = _write_pki(tmp_path_factory.mktemp("pki"))
    probe = ssl.create_default_context(cafile=str(pki.ca))  # how Kafka's readiness probe connects
    probe.load_cert_chain(pki.cert("admin"), pki.key("admin"))
    with bootstrap_with(request, tmp_path_factory, _settings(pki), probe) as bootstrap:
        yield Target(bootstrap, pki)


def _alice_acls(admin: KafkaAdminClient) -> list[ACL]:
    every = ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY)
    acls, error = admin.describe_acls(ACLFilter("User:CN=alice", None, ACLOperation.ANY, ACLPermissionType.ANY, every))
    assert error.errno == 0, error
    return acls


def test_alice_reads_what_admin_granted_and_nothing_else(target: Target) -> None:
    topic, other_topic = unique("tls-acl-t"), unique("tls-acl-other-t")
    group, other_group = unique("tls-acl-g"), unique("tls-acl-other-g")
    admin = KafkaAdminClient(bootstrap_servers=target.bootstrap, client_id="admin", **target.pki.client("admin"))
    admin.create_topics([NewTopic(t, 1, 1) for t in (topic, other_topic)])
    producer = KafkaProducer(bootstrap_servers=target.bootstrap, **target.pki.client("admin"))
    for value in (b"a", b"b", b"c"):
        producer.send(topic, value).get(timeout=30)
    producer.send(other_topic, b"x").get(timeout=30)
    producer.close()
    grants = [
        ACL(
            "User:CN=alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW, ResourcePattern(ResourceType.TOPIC, topic)
        ),
        ACL(
            "User:CN=alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW, ResourcePattern(ResourceType.GROUP, group)
        ),
    ]
    assert admin.create_acls(grants)["failed"] == []
    deadline = time.monotonic() + WAIT_S
    while len(_alice_acls(admin)) < 2:  # Kafka applies ACLs a moment after answering
        assert time.monotonic() < deadline, "alice's ACLs never showed"
        time.sleep(0.1)

    alice = target.pki.client("alice")
    consumer = KafkaConsumer(
        topic, bootstrap_servers=target.bootstrap, group_id=group, auto_offset_reset="earliest", **alice
    )
    read: list[bytes] = []
    deadline = time.monotonic() + WAIT_S
    while len(read) < 3 and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=500).values():
            read.extend(r.value for r in records)
    consumer.commit()
    assert sorted(read) == [b"a", b"b", b"c"]
    assert consumer.committed(TopicPartition(topic, 0)) == 3
    consumer.close()

    denied_group = KafkaConsumer(
        topic, bootstrap_servers=target.bootstrap, group_id=other_group, auto_offset_reset="earliest", **alice
    )
    with pytest.raises(GroupAuthorizationFailedError):
        for _ in range(50):
            denied_group.poll(timeout_ms=200)
    denied_group.close()

    denied_topic = KafkaConsumer(
        bootstrap_servers=target.bootstrap, group_id=group, auto_offset_reset="earliest", **alice
    )
    denied_topic.assign([TopicPartition(other_topic, 0)])
    with pytest.raises(TopicAuthorizationFailedError):
        for _ in range(50):
            denied_topic.poll(timeout_ms=200)
    denied_topic.close()

    as_alice = KafkaAdminClient(bootstrap_servers=target.bootstrap, client_id="alice-admin", **alice)
    sneaky = ACL(
        "User:CN=alice",
        "*",
        ACLOperation.ALL,
        ACLPermissionType.ALLOW,
        ResourcePattern(ResourceType.TOPIC, other_topic),
    )
    assert as_alice.create_acls([sneaky])["failed"] == [ClusterAuthorizationFailedError]
    as_alice.close()
    admin.close()
