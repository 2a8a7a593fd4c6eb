"""Reading a coordinator partition's records for a load, shared by the group and the transaction coordinator.

A load reads the partition in a worker thread (a big partition must not stall the event loop) and replays it on the
loop. Two things can happen meanwhile: the read fails (the partition is then FAILED: NOT_COORDINATOR for its keys,
the reason kept), or, in a several-node cluster, its leadership moves again, so that it was unloaded or a later load
already finished; then this load's records are dropped and the partition is left as it is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol, TypeVar

T = TypeVar("T")


class LoadingCoordinator(Protocol):
    def fail_loading(self, partition: int, reason: str, now_ms: int, wall_ms: int | None = None) -> None: ...

    def owned_partitions(self) -> dict[int, str]: ...


async def read_for_load(
    coordinator: LoadingCoordinator, partition: int, read: Callable[[int], T], now_ms: Callable[[], int]
) -> T | None:
    """The partition's records to replay, or None when there is nothing to replay (see the module docstring)."""
    try:
        records = await asyncio.to_thread(read, partition)
    except Exception as exc:
        coordinator.fail_loading(partition, f"reading the partition failed: {exc!r}", now_ms())
        return None
    if coordinator.owned_partitions().get(partition) != "loading":
        return None
    return records
