"""Fixtures every test directory may use: the reference Apache Kafka broker (started once per session, on demand)."""

from __future__ import annotations

import pytest

from protocol import compiled
from tests.differential.early import EARLY, start_early
from tests.differential.registry import SCENARIOS
from tests.reference.kafka import ReferenceKafka, unavailable_reason
from tests.reference.prestart import PRESTARTS, prestarts
from tests.reference.settings import SHARED_GROUP_SETTINGS


def pytest_configure(config: pytest.Config) -> None:
    """A compiled module older than its source would test code that is no longer in the tree: refuse to start."""
    old = compiled.stale()
    if old:
        pytest.exit(f"compiled before their sources changed: {', '.join(old)}; run `make accel`", returncode=4)


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


@pytest.hookimpl(trylast=True)  # after `-k`/`-m` deselection: only what will run
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Start, in the background, the reference broker with the shared settings if a collected test needs it, then
    those each collected differential scenario with settings of its own needs, then the comparisons of the collected
    scenarios that wait out real time (tests/differential/early.py), whose tests are moved to the end of the run."""
    if unavailable_reason() is not None:
        return
    if any("reference_kafka" in getattr(item, "fixturenames", ()) for item in items):
        prestarts(config).start(SHARED_GROUP_SETTINGS)
    for item in items:
        marker = item.get_closest_marker("reference_settings")
        if marker is not None:
            prestarts(config).start(marker.args[0])
    if config.option.collectonly:
        return
    early = [item for item in items if item.get_closest_marker("compared_early") is not None]
    for item in early:
        start_early(config, SCENARIOS[item.callspec.params["name"]])  # type: ignore[attr-defined]
    # Their tests run last, so that the comparisons' real-time waits overlap every other test, not one module's.
    items[:] = [item for item in items if item not in early] + early


def pytest_sessionfinish(session: pytest.Session) -> None:
    if EARLY in session.config.stash:
        session.config.stash[EARLY].stop_all()
    if PRESTARTS in session.config.stash:
        session.config.stash[PRESTARTS].stop_all()


@pytest.fixture(scope="session")
def reference_kafka(request: pytest.FixtureRequest) -> ReferenceKafka:
    """Apache Kafka (the version pinned in tests/reference/server/pom.xml), KRaft, one node on 127.0.0.1, with
    the group settings group-broker gets in the differential suite. Skipped, with the reason, where Java or the
    fetched classpath is missing (a developer's laptop); CI installs both through `make test`. A start that
    failed fails every test that needs the broker, with Kafka's log tail."""
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    return prestarts(request.config).get(SHARED_GROUP_SETTINGS)
