"""The Java client (kafka-clients 4.4.0) in an ordinary produce / consume / commit flow negotiates the newest
versions Kafka 4.4 serves, and the flow works on them (issue #16): Produce v13 and, from its KIP-848 consumer
(`group.protocol=consumer`; the classic consumer keeps topic names, v9), OffsetCommit/OffsetFetch v10, which name
topics by id. Run against group-broker (whose request metrics show the versions used) and, with
`--e2e-broker=kafka`, against Kafka 4.4 itself (the same flow, the same answers).

The Python clients keep older versions (kafka-python: Produce v9, OffsetCommit/OffsetFetch v8; librdkafka 2.16:
Produce v10, OffsetCommit/OffsetFetch v9), which test_version_inference.py and the other e2e suites cover.
"""

from __future__ import annotations

import contextlib
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.java_client import JavaAdapter
from tests.e2e.scenario import Opened, Pump, end_offsets, keyed, unique
from tests.e2e.targets import CONSUMER_PROTOCOL_SETTINGS, E2ETarget
from tests.support.broker_process import control_url, running_broker

pytestmark = pytest.mark.integration

#: (API name as the metrics spell it, version) the Java client must have used on group-broker.
NEWEST_USED = {("Produce", 13), ("OffsetCommit", 10), ("OffsetFetch", 10)}
_REQUESTS = re.compile(r'^group_broker_requests_total\{api="(\w+)",error="(\w+)",version="(\d+)"\} (\S+)$', re.M)


@pytest.fixture(scope="module")
def target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[E2ETarget]:
    """`e2e_target`, with the control API on group-broker (its /metrics count requests by API and version)."""
    if request.config.getoption("--e2e-broker") == "kafka":
        yield request.getfixturevalue("e2e_target")
        return
    settings = {**CONSUMER_PROTOCOL_SETTINGS, "control.listener": "http://127.0.0.1:0"}
    with running_broker(tmp_path_factory.mktemp("broker-data"), settings) as broker:
        yield E2ETarget(broker.bootstrap, broker)


@pytest.fixture(scope="module")
def java(target: E2ETarget, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaAdapter]:
    with contextlib.ExitStack() as stack:
        yield JavaAdapter(target.bootstrap, Path(tmp_path_factory.mktemp("java-clients")), stack, "consumer")


def _answered(target: E2ETarget) -> set[tuple[str, int]]:
    """(API, version) of every request group-broker answered without an error."""
    assert target.broker is not None
    with urllib.request.urlopen(control_url(target.broker) + "/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return {(api, int(version)) for api, error, version, count in _REQUESTS.findall(text) if error == "NONE"}


def test_java_produce_consume_commit_on_the_newest_versions(java: JavaAdapter, target: E2ETarget) -> None:
    topic, group = unique("newest"), unique("newest-group")
    java.create_topic(topic, 2)
    produced = java.produce(topic, keyed(0, 30))
    assert len(produced) == 30
    with Opened(java) as opened:
        member = opened.consumer(group, topic, unique("newest-member"))
        pump = Pump([member])
        pump.until(lambda: len(pump.all_received()) == len(produced), "the member to consume every record")
        assert sorted(r.position for r in pump.all_received()) == sorted(r.position for r in produced)
        member.commit()
        assert member.committed([0, 1]) == end_offsets(produced)
    assert java.committed_offsets(group, topic) == end_offsets(produced)
    if target.broker is not None:
        answered = _answered(target)
        assert answered >= NEWEST_USED, " ".join(f"{a}:{v}" for a, v in sorted(answered))
