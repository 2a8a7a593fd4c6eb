"""Fixtures every test directory may use: the reference Apache Kafka broker (started once per session, on demand)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.reference.kafka import ReferenceKafka, unavailable_reason
from tests.reference.settings import SHARED_GROUP_SETTINGS


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--e2e-broker",
        choices=("group-broker", "kafka"),
        default="group-broker",
        help=(
            "the broker the end-to-end tests written for both run against (fixture `e2e_target`): group-broker"
            " (default), or the reference Apache Kafka, which proves the tests themselves right"
            " (`make test-e2e-reference`)"
        ),
    )


@pytest.fixture(scope="session")
def reference_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReferenceKafka]:
    """Apache Kafka (the version pinned in tests/reference/server/pom.xml), KRaft, one node on 127.0.0.1, with
    the group settings group-broker gets in the differential suite. Skipped, with the reason, where Java or the
    fetched classpath is missing (a developer's laptop); CI installs both through `make test`."""
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    kafka = ReferenceKafka(tmp_path_factory.mktemp("reference-kafka"), SHARED_GROUP_SETTINGS)
    kafka.start()
    try:
        yield kafka
    finally:
        kafka.stop()
