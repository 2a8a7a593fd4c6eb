"""Scenarios that wait out real time (offset retention's minute, `@scenario(..., early=True)`) are compared in a
background thread from collection on, so that their wait overlaps the tests that run before the differential
module instead of adding to it: the module then costs about its other scenarios' time.

Each one gets its own pair of brokers: the reference Kafka pre-started for its settings (`tests.reference.prestart`)
and a group-broker process started in the thread. Its test waits for the comparison (begun then if collection did
not begin it).
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.differential.registry import Scenario
from tests.differential.runner import Comparison, Target, compare_all
from tests.reference.prestart import Prestarts, prestarts
from tests.reference.settings import SHARED_GROUP_SETTINGS
from tests.support.broker_process import running_broker


def _compare(scenario: Scenario, kafkas: Prestarts) -> Comparison:
    settings = dict(scenario.settings or SHARED_GROUP_SETTINGS)
    kafka = kafkas.get(settings)
    data_dir = Path(tempfile.mkdtemp(prefix=f"early-{scenario.name}-"))
    try:
        with running_broker(data_dir, settings) as ours:
            run = compare_all([scenario], Target.parse(ours.bootstrap), Target.parse(kafka.bootstrap), settings)
            return asyncio.run(run)[scenario.name]
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


class EarlyComparisons:
    """The session's early comparisons, one thread each, by scenario name."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(thread_name_prefix="early-scenario")
        self._futures: dict[str, Future[Comparison]] = {}

    def start(self, scenario: Scenario, kafkas: Prestarts) -> None:
        if scenario.name not in self._futures:
            self._futures[scenario.name] = self._pool.submit(_compare, scenario, kafkas)

    def get(self, scenario: Scenario, kafkas: Prestarts) -> Comparison:
        self.start(scenario, kafkas)
        return self._futures[scenario.name].result()

    def stop_all(self) -> None:
        """Wait for the comparisons under way (each stops its own broker) and start no more."""
        self._pool.shutdown(wait=True, cancel_futures=True)


EARLY = pytest.StashKey[EarlyComparisons]()


def early_comparisons(config: pytest.Config) -> EarlyComparisons:
    if EARLY not in config.stash:
        config.stash[EARLY] = EarlyComparisons()
    return config.stash[EARLY]


def start_early(config: pytest.Config, scenario: Scenario) -> None:
    """Begin `scenario`'s comparison now, in the background (from the collection hook)."""
    early_comparisons(config).start(scenario, prestarts(config))


def compared_early(config: pytest.Config, scenario: Scenario) -> Comparison:
    """`scenario`'s comparison, waiting for it."""
    return early_comparisons(config).get(scenario, prestarts(config))
