"""Reference Kafka brokers started in background threads as soon as collection shows which ones the run needs.

A reference broker's JVM start and the load of every `__consumer_offsets` partition take up to a minute on CI's two
cores, and the differential suite needs one per distinct set of settings. Started one after another when their
first test runs, they cost minutes of wall time; started at collection they overlap the tests before their first
user, on the core pytest leaves idle. A start that failed re-raises, with Kafka's log tail, in every test that needs
that broker.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.reference.kafka import ReferenceKafka

#: A start shares the machine with the tests that run meanwhile, so it gets longer than a lone start.
BACKGROUND_START_TIMEOUT_S = 240.0
#: Two JVMs starting at once keep both cores busy; more would only slow each other and the tests.
PARALLEL_STARTS = 2

SettingsKey = tuple[tuple[str, str], ...]


def settings_key(settings: Mapping[str, str]) -> SettingsKey:
    return tuple(sorted(settings.items()))


def _start(settings: SettingsKey) -> ReferenceKafka:
    kafka = ReferenceKafka(Path(tempfile.mkdtemp(prefix="reference-kafka-")), dict(settings))
    kafka.start(BACKGROUND_START_TIMEOUT_S)
    return kafka


class Prestarts:
    """The run's reference brokers, one per settings, each started once in the background and stopped at the end."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(PARALLEL_STARTS, thread_name_prefix="reference-kafka")
        self._futures: dict[SettingsKey, Future[ReferenceKafka]] = {}

    def start(self, settings: Mapping[str, str]) -> None:
        """Begin starting a broker with `settings` unless one is already on its way (in the order asked)."""
        key = settings_key(settings)
        if key not in self._futures:
            self._futures[key] = self._pool.submit(_start, key)

    def get(self, settings: Mapping[str, str]) -> ReferenceKafka:
        """The broker with `settings`, waiting for its start (begun now if nobody asked before)."""
        self.start(settings)
        return self._futures[settings_key(settings)].result()

    def stop_all(self) -> None:
        """Stop every broker that started (a failed start was reported to the tests that needed it)."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        for future in self._futures.values():
            if future.cancelled() or future.exception() is not None:
                continue
            kafka = future.result()
            kafka.stop()
            shutil.rmtree(kafka.work_dir, ignore_errors=True)


#: Where a session keeps its pre-started brokers.
PRESTARTS = pytest.StashKey[Prestarts]()


def prestarts(config: pytest.Config) -> Prestarts:
    """The session's pre-started reference brokers (created on first use)."""
    if PRESTARTS not in config.stash:
        config.stash[PRESTARTS] = Prestarts()
    return config.stash[PRESTARTS]
