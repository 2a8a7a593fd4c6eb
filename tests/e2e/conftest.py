"""End-to-end fixtures: one real broker process per test module, reached over TCP on 127.0.0.1."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from tests.e2e.cluster_nodes import SETTINGS as CLUSTER_SETTINGS
from tests.e2e.cluster_nodes import ThreeNodes
from tests.e2e.targets import CONSUMER_PROTOCOL_SETTINGS, E2ETarget
from tests.reference.kafka import ReferenceKafka, unavailable_reason
from tests.support.broker_process import BrokerProcess, running_broker
from tests.support.tls import TlsFiles


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    """A CA, a broker and a client certificate for the secured modules (test_ssl, test_sasl)."""
    return TlsFiles.create(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def broker_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    data_dir: Path = tmp_path_factory.mktemp("broker-data")
    with running_broker(data_dir) as broker:
        yield broker


@pytest.fixture(scope="module")
def three_nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreeNodes]:
    """A three-node group-broker process (`cluster.nodes=3`) with its control API, one per module."""
    with running_broker(tmp_path_factory.mktemp("three-nodes"), CLUSTER_SETTINGS) as broker:
        yield ThreeNodes.of(broker)


@pytest.fixture
def cluster(three_nodes: ThreeNodes) -> Iterator[ThreeNodes]:
    """The module's three nodes, all running again after the test (whatever it stopped)."""
    yield three_nodes
    three_nodes.start_stopped()


@pytest.fixture(scope="module")
def bootstrap(broker_process: BrokerProcess) -> str:
    return broker_process.bootstrap


@pytest.fixture(scope="module")
def e2e_target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[E2ETarget]:
    """The bootstrap of the broker a module runs against, with `CONSUMER_PROTOCOL_SETTINGS`: a group-broker
    process by default, the reference Apache Kafka with `--e2e-broker=kafka`. Asked for explicitly, a missing Kafka
    fails the run instead of skipping it."""
    with target(request, tmp_path_factory) as found:
        yield found


@contextlib.contextmanager
def target(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, features: Mapping[str, int] | None = None
) -> Iterator[E2ETarget]:
    """`e2e_target`'s broker, with `features` (e.g. transaction.version=0) finalized at other levels than the
    release's defaults: Kafka's storage is formatted with them, group-broker gets the setting of the same name."""
    if request.config.getoption("--e2e-broker") == "kafka":
        reason = unavailable_reason()
        if reason is not None:
            pytest.fail(f"--e2e-broker=kafka: {reason}", pytrace=False)
        kafka = ReferenceKafka(
            tmp_path_factory.mktemp("reference-kafka"), CONSUMER_PROTOCOL_SETTINGS, features=features
        )
        kafka.start()
        try:
            yield E2ETarget(kafka.bootstrap, None)
        finally:
            kafka.stop()
        return
    # group-broker's control listener serves its metrics (requests by API), which tests may read.
    settings = {**CONSUMER_PROTOCOL_SETTINGS, "control.listener": "http://127.0.0.1:0"}
    settings.update({name: str(level) for name, level in (features or {}).items()})
    with running_broker(tmp_path_factory.mktemp("broker-data"), settings) as broker:
        yield E2ETarget(broker.bootstrap, broker)
