"""Background upkeep runs each job when the broker clock says it is due; a failing job does not stop the others."""

from __future__ import annotations

from broker.maintenance import CHECKPOINT_INTERVAL_MS, FLUSH_CHECK_INTERVAL_MS, Maintenance


class _Clock:
    def __init__(self) -> None:
        self.now = 1_000

    def monotonic_ms(self) -> int:
        return self.now

    def wall_ms(self) -> int:
        return self.now + 1_700_000_000_000


class _Logs:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def apply_retention(self, now_ms: int) -> int:
        self.calls.append("retention")
        raise RuntimeError("disk on fire")  # must not stop the other jobs

    def flush_due(self, now_ms: int) -> int:
        self.calls.append("flush")
        return 0

    def checkpoint(self) -> None:
        self.calls.append("checkpoint")


def test_jobs_run_when_due_and_survive_failures() -> None:
    clock, logs = _Clock(), _Logs()
    upkeep = Maintenance(logs, clock, retention_check_ms=300_000, flush_ms=500)
    assert upkeep.next_deadline_ms() == 1_500
    upkeep.tick(clock.now)
    assert logs.calls == []
    clock.now += 500
    upkeep.tick(clock.now)
    assert logs.calls == ["flush"]
    clock.now = 1_000 + 300_000
    upkeep.tick(clock.now)
    assert logs.calls == ["flush", "retention", "checkpoint", "flush"]
    assert upkeep.next_deadline_ms() == clock.now + 500
    assert CHECKPOINT_INTERVAL_MS < 300_000


def test_flushes_are_checked_every_second_without_a_static_flush_interval() -> None:
    """A topic's flush.ms, or log.flush.interval.ms set by AlterConfigs, asks for time-based flushes too."""
    clock, logs = _Clock(), _Logs()
    upkeep = Maintenance(logs, clock, retention_check_ms=10**12, flush_ms=None)
    assert upkeep.next_deadline_ms() == clock.now + FLUSH_CHECK_INTERVAL_MS
    clock.now = 10**9
    upkeep.tick(clock.now)
    assert "flush" in logs.calls and "checkpoint" in logs.calls
