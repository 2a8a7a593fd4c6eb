"""The purgatory: one keyed timer for every delayed operation of the coordinator.

Kafka's coordinator drives delayed join, delayed heartbeat, delayed sync, pending-member expiry and the initial
rebalance delay from one `CoordinatorTimer` with string keys (`schedule` replaces whatever was scheduled under the
same key, `cancel` removes it). This is that timer for a clock-free state machine: deadlines are absolute
monotonic milliseconds, and nothing fires until the owner calls `poll(now_ms)`; the broker arms a single event loop
callback at `next_deadline_ms()`, tests advance a manual clock and poll. Production and tests run the same code.

Operations are zero-argument callables that re-enter the coordinator *by ids* and re-look-up state, so an
operation that outlived its subject (a member that left, a group that was deleted) is a harmless no-op.

Implementation: a binary heap of `(deadline, seq, entry)` plus a dict `key -> entry`.

* Stale-entry guard (Kafka's `EventBasedCoordinatorTimer`): a heap item whose entry is no longer the dict's entry
  for its key was cancelled or replaced and is skipped, never fired.
* Lazy postponement: a heartbeat moves a deadline *later*, and it is by far the most frequent call. Instead of
  pushing a new heap item each time, the entry's deadline is updated in place; when its old, earlier heap item
  reaches the top it is re-pushed at the current deadline. A heartbeat is thus one dict update, and the heap holds
  about one item per live key. Rescheduling *earlier* pushes a new item and orphans the old one.
* `seq` (a schedule counter) breaks deadline ties, so firing order is deterministic: (deadline, order scheduled).
* The heap is rebuilt when orphaned items outnumber live ones, bounding memory at a small multiple of live keys.
* `on_sooner` (optional): told the deadline of every heap push, the only way the earliest deadline can move
  earlier. The broker's timer driver subscribes, so it re-arms only when it must instead of asking
  `next_deadline_ms()` after every request; a heartbeat (a postponement, no push) tells it nothing.
* `poll` runs operations until nothing is due, including ones that operations schedule for "now", and asserts a
  bound on the number it runs (TigerStyle: put a limit on everything).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable, Iterator

Op = Callable[[], None]


class _Entry:
    __slots__ = ("deadline_ms", "heap_deadline_ms", "heap_seq", "key", "op", "seq")

    def __init__(self, key: Hashable, deadline_ms: int, seq: int, op: Op) -> None:
        self.key = key
        self.deadline_ms = deadline_ms
        self.seq = seq
        self.op = op
        self.heap_deadline_ms = deadline_ms
        self.heap_seq = seq


class TimerLoopError(RuntimeError):
    """`poll` ran more operations than its bound: operations keep scheduling work for the past."""


class Timer:
    """Keyed deadlines with replace-on-schedule semantics, fired only by `poll(now_ms)`."""

    __slots__ = ("_entries", "_heap", "_max_ops_per_poll", "_seq", "_stale", "on_sooner")

    def __init__(self, *, max_ops_per_poll: int = 10_000_000) -> None:
        self._entries: dict[Hashable, _Entry] = {}
        self._heap: list[tuple[int, int, _Entry]] = []
        self._seq = 0
        self._stale = 0
        self._max_ops_per_poll = max_ops_per_poll
        #: Called with the deadline of every new heap item (a new key, or one rescheduled earlier): whoever waits
        #: for `next_deadline_ms()` learns here, and only here, that it may have moved earlier.
        self.on_sooner: Callable[[int], None] | None = None

    # -- scheduling ------------------------------------------------------------------------------------------

    def schedule(self, key: Hashable, deadline_ms: int, op: Op) -> None:
        """Run `op` at `deadline_ms`, replacing whatever was scheduled under `key`."""
        self._seq += 1
        entry = self._entries.get(key)
        if entry is not None and deadline_ms >= entry.heap_deadline_ms:
            # Postpone in place: the existing heap item fires first and is re-pushed at the new deadline.
            entry.deadline_ms = deadline_ms
            entry.seq = self._seq
            entry.op = op
            return
        if entry is not None:
            self._stale += 1
        entry = _Entry(key, deadline_ms, self._seq, op)
        self._entries[key] = entry
        heapq.heappush(self._heap, (deadline_ms, self._seq, entry))
        self._maybe_compact()
        if self.on_sooner is not None:
            self.on_sooner(deadline_ms)

    def schedule_if_absent(self, key: Hashable, deadline_ms: int, op: Op) -> bool:
        """Schedule only if nothing is scheduled under `key`; returns whether it scheduled."""
        if key in self._entries:
            return False
        self.schedule(key, deadline_ms, op)
        return True

    def cancel(self, key: Hashable) -> bool:
        """Forget `key`; returns whether something was scheduled under it."""
        if self._entries.pop(key, None) is None:
            return False
        self._stale += 1
        self._maybe_compact()
        return True

    # -- inspection ------------------------------------------------------------------------------------------

    def contains(self, key: Hashable) -> bool:
        return key in self._entries

    def deadline(self, key: Hashable) -> int | None:
        """The deadline scheduled under `key`, or None."""
        entry = self._entries.get(key)
        return None if entry is None else entry.deadline_ms

    def keys(self) -> Iterator[Hashable]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def next_deadline_ms(self) -> int | None:
        """The earliest live deadline, or None when nothing is scheduled."""
        top = self._clean_top()
        return None if top is None else top.deadline_ms

    # -- firing ----------------------------------------------------------------------------------------------

    def poll(self, now_ms: int) -> int:
        """Run every operation whose deadline is <= now_ms, in (deadline, schedule order); return how many ran."""
        ran = 0
        while True:
            top = self._clean_top()
            if top is None or top.deadline_ms > now_ms:
                return ran
            heapq.heappop(self._heap)
            del self._entries[top.key]
            ran += 1
            if ran > self._max_ops_per_poll:
                raise TimerLoopError(f"more than {self._max_ops_per_poll} timer operations in one poll")
            top.op()

    def _clean_top(self) -> _Entry | None:
        """Drop orphaned items and re-push postponed ones until the top item is live and current."""
        heap = self._heap
        entries = self._entries
        while heap:
            _, _, entry = heap[0]
            if entries.get(entry.key) is not entry:
                heapq.heappop(heap)
                self._stale -= 1
                continue
            if entry.heap_seq != entry.seq:
                entry.heap_deadline_ms = entry.deadline_ms
                entry.heap_seq = entry.seq
                heapq.heapreplace(heap, (entry.deadline_ms, entry.seq, entry))
                continue
            return entry
        self._stale = 0
        return None

    def _maybe_compact(self) -> None:
        if self._stale > 1024 and self._stale > len(self._entries):
            heap = []
            for entry in self._entries.values():
                entry.heap_deadline_ms = entry.deadline_ms
                entry.heap_seq = entry.seq
                heap.append((entry.deadline_ms, entry.seq, entry))
            heapq.heapify(heap)
            self._heap = heap
            self._stale = 0
