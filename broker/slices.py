"""Run a stepwise storage operation on the event loop in short slices, so other requests are served in between.

Creating, growing or deleting a topic with thousands of partitions takes seconds of file-system calls. Run in one
go it would stall the loop: heartbeats would go unanswered and bystander group members would expire. The storage
layer offers those operations as generators whose every step is one partition (:data:`storage.log_manager.Steps`);
this runner does steps for a few milliseconds, then yields to the loop. It stays on the loop thread, so everything
else that reads the log manager sees either the state before or after a step, never a half-done one.
"""

from __future__ import annotations

import asyncio
import time
from typing import TypeVar, cast

from storage.log_manager import Steps

__all__ = ["SLICE_S", "run_in_slices"]

#: Work done between two yields to the event loop.
SLICE_S = 0.005

_T = TypeVar("_T")


async def run_in_slices(steps: Steps[_T], slice_s: float = SLICE_S) -> _T:
    """Drive ``steps`` to its end, yielding to the loop every ``slice_s``; its return value is the result.

    If the awaiting task is cancelled the generator is closed, which rolls back what it had done.
    """
    try:
        while True:
            deadline = time.monotonic() + slice_s
            while time.monotonic() < deadline:
                next(steps)
            await asyncio.sleep(0)
    except StopIteration as stop:
        return cast(_T, stop.value)
    finally:
        steps.close()
