"""Background upkeep runs each job when it is due, and one failing job does not stop the others."""

from __future__ import annotations

from typing import Any

from broker.maintenance import CHECKPOINT_INTERVAL_MS, Maintenance


class _Logs:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def apply_retention(self, now_ms: int) -> int:
        self.calls.append(("retention", now_ms))
        raise RuntimeError("disk on fire")  # must not stop the other jobs

    def flush_due(self, now_ms: int) -> int:
        self.calls.append(("flush", now_ms))
        return 0

    def checkpoint(self) -> None:
        self.calls.append(("checkpoint", -1))


def test_jobs_run_when_due_and_survive_failures() -> None:
    now = [1_000]
    logs = _Logs()
    upkeep = Maintenance(logs, lambda: now[0], retention_check_ms=300_000, flush_ms=500)  # type: ignore[arg-type]
    upkeep.run_due()
    assert logs.calls == []
    now[0] += 500
    upkeep.run_due()
    assert logs.calls == [("flush", 1_500)]
    now[0] = 1_000 + 300_000
    upkeep.run_due()
    names: list[Any] = [name for name, _ in logs.calls]
    assert names == ["flush", "retention", "checkpoint", "flush"]
    assert CHECKPOINT_INTERVAL_MS < 300_000


def test_no_flush_job_without_a_flush_interval() -> None:
    logs = _Logs()
    upkeep = Maintenance(logs, lambda: 10**9, retention_check_ms=10**12, flush_ms=None)  # type: ignore[arg-type]
    upkeep.run_due()
    assert ("flush", 10**9) not in logs.calls
