"""group-broker answers every scenario as Apache Kafka does, except for the pinned, documented differences."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from tests.differential.early import compared_early
from tests.differential.known import expected, known_table
from tests.differential.registry import Scenario, load_all
from tests.differential.runner import Comparison, Target, compare_all
from tests.reference.kafka import ReferenceKafka
from tests.reference.prestart import prestarts
from tests.reference.settings import SHARED_GROUP_SETTINGS
from tests.support.broker_process import ROOT, BrokerProcess, running_broker

SCENARIOS = load_all()


def _by_settings() -> dict[tuple[tuple[str, str], ...], list[Scenario]]:
    """The scenarios compared in the module's fixture (all but the early ones), by settings."""
    groups: dict[tuple[tuple[str, str], ...], list[Scenario]] = {}
    for s in SCENARIOS.values():
        if s.early:
            continue
        groups.setdefault(tuple(sorted((s.settings or SHARED_GROUP_SETTINGS).items())), []).append(s)
    return groups


@pytest.fixture(scope="module")
def comparisons(
    differential_broker: BrokerProcess,
    reference_kafka: ReferenceKafka,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> Iterator[dict[str, Comparison]]:
    """All scenarios at once (a few in parallel), so the module costs about its longest scenarios, not their sum.
    Scenarios with settings of their own get a pair of brokers started with them (Kafka's pre-started at
    collection, see the `reference_settings` marks below)."""
    shared = tuple(sorted(SHARED_GROUP_SETTINGS.items()))
    runs = []
    with ExitStack() as stack:
        for key, scenarios in _by_settings().items():
            if key == shared:
                ours, kafka = differential_broker.bootstrap, reference_kafka.bootstrap
            else:
                settings = dict(key)
                ours = stack.enter_context(running_broker(tmp_path_factory.mktemp("own-settings"), settings)).bootstrap
                kafka = prestarts(request.config).get(settings).bootstrap
            runs.append(compare_all(scenarios, Target.parse(ours), Target.parse(kafka), dict(key)))

        async def everything() -> dict[str, Comparison]:
            found: dict[str, Comparison] = {}
            for result in await asyncio.gather(*runs):
                found.update(result)
            return found

        yield asyncio.run(everything())


def _with_reference_settings(name: str) -> Any:
    """A scenario with settings of its own names them, so that its Kafka starts in the background at collection;
    an early one says so, so that its comparison starts then too."""
    scenario = SCENARIOS[name]
    marks = [pytest.mark.compared_early] if scenario.early else []
    if scenario.settings is not None and scenario.settings != SHARED_GROUP_SETTINGS:
        marks.append(pytest.mark.reference_settings(scenario.settings))
    return pytest.param(name, marks=marks)


@pytest.mark.parametrize("name", [_with_reference_settings(name) for name in sorted(SCENARIOS)])
def test_answers_as_kafka_does(name: str, request: pytest.FixtureRequest) -> None:
    scenario = SCENARIOS[name]
    if scenario.early:
        comparison = compared_early(request.config, scenario)
    else:
        comparison = request.getfixturevalue("comparisons")[name]
    found = comparison.differences
    assert found == expected(name), "\n".join(
        [f"{name} ({comparison.scenario.covers}): differences from Kafka other than the pinned ones:"]
        + [f"  {d}" for d in found]
        + ["group-broker:"]
        + [f"  {step.label}: {step.outcome}" for step in comparison.ours]
        + ["Kafka:"]
        + [f"  {step.label}: {step.outcome}" for step in comparison.kafka]
    )


def test_readme_lists_every_pinned_difference() -> None:
    readme = (ROOT / "README.md").read_text()
    begin, end = "<!-- differential:begin -->\n", "<!-- differential:end -->"
    assert begin in readme and end in readme, "README.md lost its differential table markers"
    table = readme.split(begin, 1)[1].split(end, 1)[0]
    assert table == known_table(), "README.md's differences table is stale: python -m tests.differential --known-table"
