"""`GET /storage`, `group-broker storage` and the storage metrics read one view (`broker.storage_status`): a
failed offsets partition shows as failed with its reason, the CLI exits 1 for it, the metrics count it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from broker.metrics import BrokerMetrics
from broker.offsets_log import OFFSETS_TOPIC
from broker.storage_status import format_storage_status, storage_status
from storage.config import LogConfig
from storage.log_manager import LogManager
from tests.coordinator.harness import CoordinatorTestContext


def fake_broker(tmp_path: Path) -> Any:
    logs = LogManager([tmp_path / "logs"], LogConfig(), now_ms=0)
    logs.create_topic(OFFSETS_TOPIC, 3)
    (tmp_path / "logs" / f"{OFFSETS_TOPIC}-1" / "stray.log").write_bytes(b"x")
    logs.close()
    logs = LogManager([tmp_path / "logs"], LogConfig(), now_ms=0)
    ctx = CoordinatorTestContext(partitions=[], offsets_topic_num_partitions=3)
    for partition in range(3):
        ctx.coordinator.begin_loading(partition)
    ctx.coordinator.load_partition(0, [], ctx.now_ms)
    ctx.coordinator.fail_loading(2, "OSError('Input/output error')", ctx.now_ms)
    return SimpleNamespace(coordinator=ctx.coordinator, logs=logs)


def test_status_shows_each_partition_state_and_what_was_quarantined(tmp_path: Path) -> None:
    broker = fake_broker(tmp_path)
    status = storage_status(broker.coordinator, broker.logs)
    assert status["offsets_partitions"] == [
        {"partition": 0, "state": "active", "skipped_ranges": 0, "error": None},
        {"partition": 1, "state": "loading", "skipped_ranges": 0, "error": None},
        {"partition": 2, "state": "failed", "skipped_ranges": 0, "error": "OSError('Input/output error')"},
    ]
    [moved] = status["quarantined_files"]
    assert (moved["topic"], moved["partition"], moved["original"]) == (OFFSETS_TOPIC, 1, "stray.log")
    text = format_storage_status(status)
    assert "__consumer_offsets: 1 loading, 1 active, 1 failed" in text
    assert "partition 2: failed, 0 damaged range(s) skipped, error: OSError('Input/output error')" in text
    assert "quarantined files: 1" in text


def test_metrics_count_partition_states_and_quarantined_files(tmp_path: Path) -> None:
    broker = fake_broker(tmp_path)
    metrics = BrokerMetrics(broker.coordinator, broker.logs, [], list, lambda: 0)
    families = {family.name: family for family in metrics._storage()}
    states = {s.labels["state"]: s.value for s in families["group_broker_offsets_partitions"].samples}
    assert states == {"loading": 1, "active": 1, "failed": 1}
    assert families["group_broker_quarantined_files"].samples[0].value == 1
    assert families["group_broker_log_damaged_ranges"].samples[0].value == 0
    assert families["group_broker_offsets_partition_skipped_ranges"].samples == []
