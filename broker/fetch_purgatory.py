"""Delayed fetches: a Fetch that found fewer than `min_bytes` waits up to `max_wait_ms` for appends.

The same keyed timer as the coordinator's purgatory holds each waiting fetch's deadline (driven by the same
`TimerDriver`); an append to any partition the fetch reads completes it early. Completion re-runs the read, so the
answer always reflects the log at the moment it is sent; a fetch that still finds fewer than `min_bytes` (a
read_committed fetch woken by a write above the last stable offset, say) parks again until its deadline.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import defaultdict
from collections.abc import Iterable

from coordinator.timer import Timer

TopicPartition = tuple[str, int]


class FetchPurgatory:
    def __init__(self) -> None:
        self._timer = Timer()
        self._ids = itertools.count()
        self._waiters: dict[int, asyncio.Future[None]] = {}
        self._by_partition: defaultdict[TopicPartition, set[int]] = defaultdict(set)
        self._partitions: dict[int, tuple[TopicPartition, ...]] = {}
        #: How many times a fetch was parked (tests wait on it; it only grows).
        self.parked = 0
        self._closed = False

    def park(self, partitions: Iterable[TopicPartition], deadline_ms: int) -> asyncio.Future[None]:
        """A future that resolves at the deadline or at the first append to one of `partitions` (at once once the
        purgatory is closed: nothing would complete it)."""
        waiter_id = next(self._ids)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.parked += 1
        if self._closed:
            future.set_result(None)
            return future
        self._waiters[waiter_id] = future
        watched = tuple(partitions)
        self._partitions[waiter_id] = watched
        for tp in watched:
            self._by_partition[tp].add(waiter_id)
        self._timer.schedule(waiter_id, deadline_ms, lambda: self._complete(waiter_id))
        return future

    def on_append(self, topic: str, partition: int) -> None:
        for waiter_id in list(self._by_partition.get((topic, partition), ())):
            self._complete(waiter_id)

    def _complete(self, waiter_id: int) -> None:
        future = self._waiters.pop(waiter_id, None)
        if future is None:
            return
        self._timer.cancel(waiter_id)
        for tp in self._partitions.pop(waiter_id, ()):
            waiting = self._by_partition.get(tp)
            if waiting is not None:
                waiting.discard(waiter_id)
                if not waiting:
                    del self._by_partition[tp]
        if not future.done():
            future.set_result(None)

    @property
    def closed(self) -> bool:
        return self._closed

    def cancel_all(self) -> None:
        """Complete every waiting fetch and every later one at once (the broker is stopping)."""
        self._closed = True
        for waiter_id in list(self._waiters):
            self._complete(waiter_id)

    # Ticking protocol for the TimerDriver
    def next_deadline_ms(self) -> int | None:
        return self._timer.next_deadline_ms()

    def tick(self, now_ms: int) -> int:
        return self._timer.poll(now_ms)

    def __len__(self) -> int:
        return len(self._waiters)
