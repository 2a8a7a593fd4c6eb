"""What a group waits for while time is frozen: its pending coordinator timers, and whether anything else can act.

Built by `BrokerControls.frozen_timer_blocking` on the broker's loop, read by `wait_for_group` in the test's thread
(which decides, by its grace rule, when to give up; see there). Stdlib only: the pytest plugin imports it.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PendingTimer:
    """One coordinator timer of the group, `due_in_ms` of virtual time from now."""

    what: str
    due_in_ms: int

    def __str__(self) -> str:
        return f"{self.what} due at +{self.due_in_ms} ms"


@dataclass(frozen=True, slots=True)
class FrozenWait:
    """A group on a frozen clock with timers pending.

    `exact`: nothing but a timer can move the group (every member is parked in its JoinGroup), so a wait may fail
    at once. `fingerprint`: the group's observable state and request count; while it stands still nobody acts.
    A consumer group (KIP-848) also has an `assignment_epoch` (`generation` is then its group epoch), the
    sentences of what its reconciliation `waits` for, and a `min_grace_s` of real quiet time below which a wait
    must not give up (its members heartbeat less often than classic ones)."""

    group_id: str
    state: str
    generation: int
    timers: tuple[PendingTimer, ...]
    exact: bool
    fingerprint: Hashable
    assignment_epoch: int | None = None
    waits: tuple[str, ...] = ()
    min_grace_s: float = 0.0

    @property
    def next_advance_ms(self) -> int:
        """The `advance` that fires the next timer."""
        return min(timer.due_in_ms for timer in self.timers)

    def describe(self) -> str:
        """The error's sentence: the group, its state, its timers and the `advance` that fires the next one."""
        ms = self.next_advance_ms
        pending = ", ".join(str(timer) for timer in sorted(self.timers, key=lambda t: t.due_in_ms))
        epochs = (
            f"generation {self.generation}"
            if self.assignment_epoch is None
            else f"group epoch {self.generation}, assignment epoch {self.assignment_epoch}"
        )
        sentence = (
            f"time is frozen: group {self.group_id!r} ({self.state}, {epochs}) waits for a timer "
            f"due at +{ms} ms virtual; call advance({ms}) (or unfreeze_time()). Pending timers: {pending}"
        )
        return f"{sentence}. Reconciliation: {'; '.join(self.waits)}" if self.waits else sentence
