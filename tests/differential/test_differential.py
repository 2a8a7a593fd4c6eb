"""group-broker answers every scenario as Apache Kafka does, except for the pinned, documented differences."""

from __future__ import annotations

import asyncio

import pytest

from tests.differential.known import expected, known_table
from tests.differential.registry import load_all
from tests.differential.runner import Comparison, Target, compare_all
from tests.reference.kafka import ReferenceKafka
from tests.reference.settings import SHARED_GROUP_SETTINGS
from tests.support.broker_process import ROOT, BrokerProcess

SCENARIOS = load_all()


@pytest.fixture(scope="module")
def comparisons(differential_broker: BrokerProcess, reference_kafka: ReferenceKafka) -> dict[str, Comparison]:
    """All scenarios at once (a few in parallel), so the module costs about its longest scenarios, not their sum."""
    ours = Target.parse(differential_broker.bootstrap)
    kafka = Target.parse(reference_kafka.bootstrap)
    return asyncio.run(compare_all(SCENARIOS.values(), ours, kafka, SHARED_GROUP_SETTINGS))


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
