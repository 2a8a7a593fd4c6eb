"""group-broker answers every scenario as Apache Kafka does, except for the pinned, documented differences."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from tests.differential.known import expected, known_table
from tests.differential.registry import Scenario, load_all
from tests.differential.runner import Comparison, Target, compare_all
from tests.reference.kafka import ReferenceKafka
from tests.reference.settings import SHARED_GROUP_SETTINGS
from tests.support.broker_process import ROOT, BrokerProcess, running_broker

SCENARIOS = load_all()


def _by_settings() -> dict[tuple[tuple[str, str], ...], list[Scenario]]:
    groups: dict[tuple[tuple[str, str], ...], list[Scenario]] = {}
    for s in SCENARIOS.values():
        groups.setdefault(tuple(sorted((s.settings or SHARED_GROUP_SETTINGS).items())), []).append(s)
    return groups


@pytest.fixture(scope="module")
def comparisons(
    differential_broker: BrokerProcess, reference_kafka: ReferenceKafka, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Comparison]]:
    """All scenarios at once (a few in parallel), so the module costs about its longest scenarios, not their sum.
    Scenarios with settings of their own get a pair of brokers started with them."""
    shared = tuple(sorted(SHARED_GROUP_SETTINGS.items()))
    runs = []
    with ExitStack() as stack:
        for key, scenarios in _by_settings().items():
            if key == shared:
                ours, kafka = differential_broker.bootstrap, reference_kafka.bootstrap
            else:
                settings = dict(key)
                ours = stack.enter_context(running_broker(tmp_path_factory.mktemp("own-settings"), settings)).bootstrap
                extra = ReferenceKafka(tmp_path_factory.mktemp("reference-kafka-own-settings"), settings)
                stack.callback(extra.stop)
                kafka = extra.start()
            runs.append(compare_all(scenarios, Target.parse(ours), Target.parse(kafka), dict(key)))

        async def everything() -> dict[str, Comparison]:
            found: dict[str, Comparison] = {}
            for result in await asyncio.gather(*runs):
                found.update(result)
            return found

        yield asyncio.run(everything())


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_answers_as_kafka_does(name: str, comparisons: dict[str, Comparison]) -> None:
    comparison = comparisons[name]
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
