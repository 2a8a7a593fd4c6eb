"""Fixtures every test directory may use: the reference Apache Kafka broker (started once per session, on demand)."""

from __future__ import annotations

import shutil
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

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


#: The reference broker started in the background as soon as collection shows a test will need it.
_PRESTARTED = pytest.StashKey["Future[ReferenceKafka]"]()
#: Its start may share the machine with the tests that run meanwhile, so it gets longer than a lone start.
_BACKGROUND_START_TIMEOUT_S = 240.0


def _start(work_dir: Path) -> ReferenceKafka:
    kafka = ReferenceKafka(work_dir, SHARED_GROUP_SETTINGS)
    kafka.start(_BACKGROUND_START_TIMEOUT_S)
    return kafka


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Start the reference broker in a thread now, while the tests before its first user run: its JVM start and
    the load of every `__consumer_offsets` partition take over a minute on CI's two cores, most of it on the core
    that pytest leaves idle."""
    needed = any("reference_kafka" in getattr(item, "fixturenames", ()) for item in items)
    if needed and unavailable_reason() is None:
        _prestart(config)


def _prestart(config: pytest.Config) -> Future[ReferenceKafka]:
    pool = ThreadPoolExecutor(1, thread_name_prefix="reference-kafka")
    future = config.stash[_PRESTARTED] = pool.submit(_start, Path(tempfile.mkdtemp(prefix="reference-kafka-")))
    pool.shutdown(wait=False)
    return future


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop the pre-started broker even if no test used it (all of them skipped or failed before it)."""
    future = session.config.stash.get(_PRESTARTED, None)
    if future is None:
        return
    try:
        kafka = future.result()
    except Exception:  # its failure was reported to the tests that needed it
        return
    kafka.stop()
    shutil.rmtree(kafka.work_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def reference_kafka(request: pytest.FixtureRequest) -> ReferenceKafka:
    """Apache Kafka (the version pinned in tests/reference/server/pom.xml), KRaft, one node on 127.0.0.1, with
    the group settings group-broker gets in the differential suite. Skipped, with the reason, where Java or the
    fetched classpath is missing (a developer's laptop); CI installs both through `make test`. A start that
    failed fails every test that needs the broker, with Kafka's log tail."""
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    future = request.config.stash.get(_PRESTARTED, None) or _prestart(request.config)
    return future.result()
