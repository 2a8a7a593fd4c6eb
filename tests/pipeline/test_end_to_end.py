"""The real broker, real clients, then ``python -m pipeline analyze`` on its log directory in a subprocess.

A kafka-python group commits, a second member joins and leaves, the remaining member stops consuming while the
producer goes on (lag), then leaves. What the broker answered just before shutdown (OffsetFetch, ListOffsets,
DescribeGroups) must be exactly the ``describe`` table rebuilt from the log, and the generations the coordinator
completed must be the rebalances the pipeline found.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="the pipeline extra is not installed")

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition

from tests.support.broker_process import ROOT, BrokerProcess, wait_until
from tests.support.clients import subscribed_consumer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPIC, GROUP = "pipe-e2e", "pipe-e2e-group"
WAIT_S = 60.0


class Member(threading.Thread):
    """One group member polling in its own thread (kafka-python consumers are not thread-safe)."""

    def __init__(self, bootstrap: str, client_id: str) -> None:
        super().__init__(daemon=True)
        self.consumer = subscribed_consumer(  # no metadata-driven rejoin (tests/support/clients.py)
            [TOPIC],
            bootstrap_servers=bootstrap,
            group_id=GROUP,
            client_id=client_id,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=6000,
            heartbeat_interval_ms=500,
            max_poll_interval_ms=30000,
        )
        self.consumed = 0
        self.consuming = True
        self.stop_flag = threading.Event()
        self.paused = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stop_flag.is_set():
                if not self.consuming and self.consumer.assignment():
                    self.consumer.pause(*self.consumer.assignment())
                    self.paused.set()
                batches = self.consumer.poll(timeout_ms=100)
                got = sum(len(v) for v in batches.values())
                if got or not self.consuming:
                    self.consumed += got
                    if self.consumer.assignment():
                        self.consumer.commit()
            self.consumer.close(autocommit=False)
        except BaseException as exc:  # surfaced by the test
            self.error = exc

    def leave(self) -> None:
        self.stop_flag.set()
        self.join(30)
        assert self.error is None, self.error


def _committed(admin: KafkaAdminClient) -> dict[int, int]:
    """OffsetFetch, as the broker answers it."""
    offsets = admin.list_group_offsets({GROUP: None})[GROUP]
    return {tp.partition: om.offset for tp, om in offsets.items() if tp.topic == TOPIC and om.offset >= 0}


def _committed_total(admin: KafkaAdminClient) -> int:
    return sum(_committed(admin).values())


def _produce(producer: KafkaProducer, start: int, count: int) -> None:
    for i in range(start, start + count):
        producer.send(TOPIC, key=f"k{i}".encode(), value=b"v")
    producer.flush()


def _run_clients(bootstrap: str) -> tuple[dict[int, int], dict[int, int], dict[str, object]]:
    """The group's life; returns what the broker said at the end: OffsetFetch, ListOffsets, DescribeGroups."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    members: list[Member] = []
    try:
        admin.create_topics({TOPIC: {"num_partitions": 2, "replication_factor": 1}})
        _produce(producer, 0, 100)
        first = Member(bootstrap, "first")
        members.append(first)
        first.start()
        wait_until(lambda: _committed_total(admin) == 100, WAIT_S, what="the first member to commit everything")
        second = Member(bootstrap, "second")
        members.append(second)
        second.start()
        wait_until(lambda: len(second.consumer.assignment()) == 1, WAIT_S, what="the second member to get a partition")
        _produce(producer, 100, 50)
        wait_until(lambda: _committed_total(admin) == 150, WAIT_S, what="both members to commit the second batch")
        second.leave()
        wait_until(
            lambda: len(first.consumer.assignment()) == 2, WAIT_S, what="the first member to own both partitions again"
        )
        first.consuming = False  # lagging phase: it keeps its session and commits, but reads nothing
        wait_until(first.paused.is_set, WAIT_S, what="the first member to pause")
        _produce(producer, 150, 80)
        time.sleep(0.3)  # a few more commits of the same (lagging) position
        first.leave()
        fetched = _committed(admin)
        probe = KafkaConsumer(bootstrap_servers=bootstrap)
        try:
            ends = {
                tp.partition: off for tp, off in probe.end_offsets([TopicPartition(TOPIC, p) for p in (0, 1)]).items()
            }
        finally:
            probe.close()
        described = admin.describe_groups([GROUP])[GROUP]
        return fetched, ends, described
    finally:
        for member in members:
            if member.is_alive():
                member.leave()
        producer.close()
        admin.close()


def test_pipeline_on_a_real_broker_log(workdir: Path) -> None:
    data_dir = workdir / "e2e-data"
    broker = BrokerProcess(data_dir, {"offsets.topic.num.partitions": "4", "num.partitions": "2"})
    bootstrap = broker.start()
    try:
        fetched, ends, described = _run_clients(bootstrap)
    finally:
        assert broker.stop() == 0
    assert described["group_state"] == "Empty" and not described["members"]

    out = workdir / "e2e-out"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline",
            "analyze",
            "--data-dir",
            str(data_dir),
            "--out",
            str(out),
            "--master",
            "local[2]",
            "--tick",
            "1s",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-4000:]

    describe = pq.read_table(str(out / "tables" / "describe")).to_pylist()
    rows = {r["partition"]: r for r in describe if r["group"] == GROUP}
    assert {p: (r["current_offset"], r["log_end_offset"], r["lag"], r["consumer_id"]) for p, r in rows.items()} == {
        p: (fetched[p], ends[p], ends[p] - fetched[p], None) for p in (0, 1)
    }
    assert sum(ends.values()) - sum(fetched.values()) == 80

    events = [
        json.loads(line) for line in broker.log_lines() if line.startswith("{") and '"rebalance.completed"' in line
    ]
    completed = sorted(e["generation"] for e in events if e.get("group") == GROUP)
    rebalances = pq.read_table(str(out / "tables" / "rebalances")).to_pylist()
    live = sorted(r["generation"] for r in rebalances if r["group"] == GROUP and r["member_count"] > 0)
    assert live == completed and len(live) >= 3
    joined = sorted(len(r["joined"]) for r in rebalances if r["group"] == GROUP)
    assert sum(joined) >= 2

    drawn = pq.read_table(str(out / "tables" / "picture_generations")).to_pylist()  # what rebalances.png draws
    assert sorted(r["generation"] for r in drawn if r["group"] == GROUP and r["member_count"] > 0) == completed
    bands = pq.read_table(str(out / "tables" / "picture_bands")).to_pylist()
    as_of_ms = json.loads((out / "inputs.json").read_text())["as_of_ms"]
    assert max(r["end_ms"] for r in bands if r["group"] == GROUP) == as_of_ms
    for name in ("lag.png", "rebalances.png"):
        image = (out / name).read_bytes()
        assert image[:8] == b"\x89PNG\r\n\x1a\n" and len(image) > 1000
        import matplotlib.image

        pixels = matplotlib.image.imread(str(out / name))
        assert pixels.shape[0] > 100 and pixels.shape[1] > 100
    report = (out / "report.txt").read_text()
    assert GROUP in report and "Burrow status per group" in report
