"""kafka-python, aiokafka, confluent-kafka and kafkajs over SSL with mutual TLS (`ssl.client.auth=required`):
each produces, consumes in a group, commits, and a new consumer resumes at the commit. The same Kafka settings
serve group-broker and, with `--e2e-broker=kafka`, Apache Kafka 4.4 (its client listener mapped to SSL)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.scenario import unique
from tests.e2e.secure_roundtrips import SYNC_CLIENTS, ClientSecurity, aiokafka
from tests.e2e.targets import CONSUMER_PROTOCOL_SETTINGS, bootstrap_with
from tests.support.tls import TlsFiles

pytestmark = pytest.mark.integration


def ssl_settings(tls: TlsFiles, directory: Path) -> dict[str, str]:
    """Kafka's keys: the listener named PLAINTEXT speaks SSL, a PEM keystore file (key + chain), PEM truststore."""
    keystore = tls.keystore_file(directory)
    return {
        **CONSUMER_PROTOCOL_SETTINGS,
        "listener.security.protocol.map": "PLAINTEXT:SSL,CONTROLLER:PLAINTEXT",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(keystore),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(tls.files.ca),
        "ssl.client.auth": "required",
    }


@pytest.fixture(scope="module")
def ssl_bootstrap(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, tls: TlsFiles
) -> Iterator[str]:
    settings = ssl_settings(tls, tmp_path_factory.mktemp("keystore"))
    with bootstrap_with(request, tmp_path_factory, settings, tls.client_context()) as bootstrap:
        yield bootstrap


def mutual_tls(tls: TlsFiles) -> ClientSecurity:
    return ClientSecurity("SSL", tls.files, client_certificate=True)


def batches(prefix: str) -> tuple[list[str], list[str]]:
    return [f"{prefix}-first-{i}" for i in range(10)], [f"{prefix}-later-{i}" for i in range(5)]


@pytest.mark.parametrize("client", sorted(SYNC_CLIENTS))
def test_produce_consume_commit_and_resume_over_mutual_tls(client: str, ssl_bootstrap: str, tls: TlsFiles) -> None:
    first, later = batches(client)
    topic, group = unique(f"ssl-{client}"), unique(f"ssl-{client}-group")
    read, resumed = SYNC_CLIENTS[client](ssl_bootstrap, mutual_tls(tls), topic, group, first, later)
    assert sorted(read) == sorted(first)
    assert sorted(resumed) == sorted(later)


async def test_aiokafka_produce_consume_commit_and_resume_over_mutual_tls(ssl_bootstrap: str, tls: TlsFiles) -> None:
    first, later = batches("aiokafka")
    topic, group = unique("ssl-aiokafka"), unique("ssl-aiokafka-group")
    read, resumed = await aiokafka(ssl_bootstrap, mutual_tls(tls), topic, group, first, later)
    assert sorted(read) == sorted(first)
    assert sorted(resumed) == sorted(later)
