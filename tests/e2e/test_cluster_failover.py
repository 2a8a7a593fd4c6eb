"""aiokafka, kafka-python and confluent-kafka (classic protocol) consumer groups on a three-node group-broker (issue
#19): they keep consuming, with nothing lost and nothing twice, and resume at the committed offsets while their
coordinator's node stops and starts, once in steady state and once in the middle of a rebalance
(`failover_scenario`).

The clients get short timeouts (reconnect backoff, metadata age, heartbeats) so that each failover takes a second or
two; they still send Kafka's own protocol. aiokafka's steady-state flow through the pytest handle is also
tests/toolkit/test_cluster_nodes_toolkit.py's, and kafkajs's is test_cluster_kafkajs.py's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.aiokafka_client import AiokafkaAdapter, AiokafkaConsumer
from tests.e2e.cluster_nodes import ThreeNodes
from tests.e2e.confluent_client import QUICK_RECOVERY, ConfluentAdapter, ConfluentConsumer
from tests.e2e.failover_scenario import Failover
from tests.e2e.kafka_python_client import KafkaPythonAdapter, KafkaPythonConsumer

pytestmark = pytest.mark.integration

QUICK_CONFLUENT = {**QUICK_RECOVERY, "heartbeat.interval.ms": 300}
QUICK_KAFKA_PYTHON = {
    "heartbeat_interval_ms": 300,
    "reconnect_backoff_ms": 50,
    "reconnect_backoff_max_ms": 500,
    "metadata_max_age_ms": 1000,
    "retry_backoff_ms": 50,
}

# aiokafka sends its session timeout as the rebalance timeout unless told otherwise: a held member (its rebalance
# callback still running) would be dropped from the rebalance after 3 s, before its coordinator's node even stops.
QUICK_AIOKAFKA = {
    "heartbeat_interval_ms": 300,
    "rebalance_timeout_ms": 60_000,
    "retry_backoff_ms": 50,
    "metadata_max_age_ms": 1000,
}


class QuickAiokafka(AiokafkaAdapter):
    def consumer(self, group: str, topic: str, name: str, **config: Any) -> AiokafkaConsumer:
        return super().consumer(group, topic, name, joined=False, **{**QUICK_AIOKAFKA, **config})


class QuickConfluent(ConfluentAdapter):
    def consumer(
        self, group: str, topic: str, name: str, commit_on_revoke: bool = False, **config: Any
    ) -> ConfluentConsumer:
        return super().consumer(group, topic, name, commit_on_revoke, **{**QUICK_CONFLUENT, **config})


class QuickKafkaPython(KafkaPythonAdapter):
    def consumer(self, group: str, topic: str, name: str, **config: Any) -> KafkaPythonConsumer:
        return super().consumer(group, topic, name, **{**QUICK_KAFKA_PYTHON, **config})


@pytest.fixture
def aiokafka(cluster: ThreeNodes) -> Iterator[QuickAiokafka]:
    adapter = QuickAiokafka(cluster.bootstrap)
    yield adapter
    adapter.close()


@pytest.fixture
def confluent(cluster: ThreeNodes) -> Iterator[QuickConfluent]:
    adapter = QuickConfluent(cluster.bootstrap)
    yield adapter
    adapter.close()


@pytest.fixture
def kafka_python(cluster: ThreeNodes) -> Iterator[QuickKafkaPython]:
    adapter = QuickKafkaPython(cluster.bootstrap)
    yield adapter
    adapter.close()


def test_aiokafka_group_survives_its_coordinators_node_stopping(aiokafka: QuickAiokafka, cluster: ThreeNodes) -> None:
    Failover(aiokafka, cluster, "ak").run()


def test_confluent_group_survives_its_coordinators_node_stopping(
    confluent: QuickConfluent, cluster: ThreeNodes
) -> None:
    Failover(confluent, cluster, "ck").run()


def test_kafka_python_group_survives_its_coordinators_node_stopping(
    kafka_python: QuickKafkaPython, cluster: ThreeNodes
) -> None:
    Failover(kafka_python, cluster, "kp").run()
