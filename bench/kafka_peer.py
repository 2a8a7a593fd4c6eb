"""The reference Apache Kafka broker as a benchmark peer: tests/reference/kafka.py's `ReferenceKafka`, timed.

This module imports the tests package; `bench.peers` imports it only when the Kafka column runs or is described, so
`make bench` works on a machine without Java (the column then says "n/a (why)"). There is no second launcher here:
`ReferenceKafka` formats the KRaft storage, spawns the broker and waits until every `__consumer_offsets` partition
has a coordinator. `TimedReferenceKafka` only notes when each of those steps begins, through the two hooks that
start() goes through (`_java` builds the argv of both the storage format and the broker; `_wait_ready` runs once the
broker is spawned), so startup is split into: storage format, spawn -> first ApiVersions answer, and spawn -> group
coordinator ready (what a consumer needs before it can join a group).

Settings: tests/reference/settings.py's SHARED_GROUP_SETTINGS (what the differential suite runs with), with the
changes in BENCH_OVERRIDES to match the other peers' best settings for these measurements. The JVM options are
tests/reference's, except that the broker gets the full JIT (C2) as Kafka ships, not the C1-only option the tests
use to start faster: throughput would otherwise be measured on half-compiled code.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.wire_load import api_versions_roundtrip
from tests.reference.kafka import ReferenceKafka, kafka_version, unavailable_reason
from tests.reference.settings import SHARED_GROUP_SETTINGS

__all__ = ["BENCH_OVERRIDES", "KafkaServer", "describe_settings", "unavailable_reason"]

BENCH_OVERRIDES = {
    "group.initial.rebalance.delay.ms": "0",  # as the other peers: no wait for more joiners
    "group.max.size": "2147483647",  # Kafka's default; the shared settings cap groups at 5 members
    # consumer protocol: hand members a 100 ms heartbeat interval, as the other peers that can (Kafka's floor is 1)
    "group.consumer.min.heartbeat.interval.ms": "100",
    "group.consumer.heartbeat.interval.ms": "100",
    # group.consumer.assignment.interval.ms stays at Kafka's default (1 s), as group-broker's: a burst of joins
    # costs one target per interval on both (the mock and kfake compute one per join)
}
SETTINGS = {**SHARED_GROUP_SETTINGS, **BENCH_OVERRIDES}
BROKER_MAIN = "kafka.Kafka"
C1_ONLY = "-XX:TieredStopAtLevel=1"
HOST = "127.0.0.1"


def describe_settings() -> str:
    shown = ", ".join(f"{key}={value}" for key, value in BENCH_OVERRIDES.items())
    return (
        f"Apache Kafka {kafka_version()} (KRaft, combined broker/controller), tests/reference/settings.py + {shown};"
        f" JVM as tests/reference minus {C1_ONLY} (full JIT)"
    )


class TimedReferenceKafka(ReferenceKafka):
    """`ReferenceKafka` that notes (perf_counter) when the storage format and the broker start, and when it answers."""

    def __init__(
        self,
        work_dir: Path,
        extra: Mapping[str, str] | None = None,
        client_ssl: ssl.SSLContext | None = None,
        **reference: Any,
    ) -> None:
        super().__init__(work_dir, {**SETTINGS, **(extra or {})}, client_ssl, **reference)
        self.format_started_at = 0.0
        self.spawned_at = 0.0
        self.answered_at = 0.0
        self.ready_at = 0.0

    def _java(self, main: str, *args: str) -> list[str]:
        argv = super()._java(main, *args)
        if main != BROKER_MAIN:
            self.format_started_at = time.perf_counter()
            return argv
        self.spawned_at = time.perf_counter()  # start() spawns the broker with this argv at once
        return [option for option in argv if option != C1_ONLY]

    async def _wait_ready(self, timeout_s: float) -> None:
        if self.client_ssl is None:  # startup is timed over plaintext only
            await asyncio.to_thread(api_versions_roundtrip, HOST, self.port, timeout_s)
        self.answered_at = time.perf_counter()
        await super()._wait_ready(timeout_s)
        self.ready_at = time.perf_counter()


class KafkaServer:
    """The `bench.peers.Broker` face of one Kafka process (fresh storage under `work_dir` on every start)."""

    name = "kafka"

    def __init__(
        self,
        work_dir: Path,
        extra: Mapping[str, str] | None = None,
        client_ssl: ssl.SSLContext | None = None,
        **reference: Any,
    ) -> None:
        """`extra`: Kafka settings on top of the benchmark's (e.g. its client listener mapped to SSL, with
        `client_ssl` the context its readiness probe connects with); `reference`: `ReferenceKafka`'s keyword
        arguments (`extra_listeners` served beside the client listener, on `listener_ports`; `format_args`)."""
        self.kafka = TimedReferenceKafka(work_dir / "kafka", extra, client_ssl, **reference)
        self.host = HOST
        self.port = 0

    @property
    def pid(self) -> int:
        assert self.kafka.process is not None
        return self.kafka.process.pid

    def start(self, timeout_s: float = 120.0) -> tuple[str, int]:
        self.kafka.start(timeout_s)
        self.port = self.kafka.port
        return self.host, self.port

    def stop(self, timeout_s: float = 30.0) -> None:
        self.kafka.stop(timeout_s)

    def startup_ms(self) -> dict[str, float]:
        """The phases of the last start, in ms: storage format; spawn -> ApiVersions; spawn -> coordinators ready."""
        k = self.kafka
        return {
            "format": (k.spawned_at - k.format_started_at) * 1e3,
            "api_versions": (k.answered_at - k.spawned_at) * 1e3,
            "ready": (k.ready_at - k.spawned_at) * 1e3,
        }
