"""`broker.eager`: a coroutine that does not wait is run without a Task; one that parks is carried on by a Task
from where it parked, in the given context, with its end reported to `finish` inside that Task, and a cancel
reaches it where it waits (even before the Task's first step)."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

from broker import eager

NAME: contextvars.ContextVar[str] = contextvars.ContextVar("name", default="outside")


class Finished:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, Any]] = []
        self.in_task: list[bool] = []

    def __call__(self, value: Any, failure: Exception | None) -> None:
        self.calls.append((value, failure))
        self.in_task.append(asyncio.current_task() is not None)


async def quick() -> str:
    return NAME.get()


async def parked(release: asyncio.Future[str], log: list[str]) -> str:
    try:
        value = await release
    except asyncio.CancelledError:
        log.append("cancelled")
        raise
    if value == "fail":
        raise ValueError(value)
    return f"{value} in {NAME.get()}"


def in_context() -> contextvars.Context:
    context = contextvars.copy_context()
    context.run(NAME.set, "connection")
    return context


async def test_a_coroutine_that_does_not_wait_returns_at_once() -> None:
    context, finished = in_context(), Finished()
    started = context.run(eager.start, quick(), context, asyncio.get_running_loop(), finished)
    assert isinstance(started, eager.Done) and started.value == "connection"
    assert finished.calls == []


async def test_a_parked_coroutine_finishes_in_its_task_and_context() -> None:
    context, finished, log = in_context(), Finished(), []
    release: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = context.run(eager.start, parked(release, log), context, asyncio.get_running_loop(), finished)
    assert isinstance(task, asyncio.Task)
    release.set_result("answer")
    await task
    assert finished.calls == [("answer in connection", None)] and finished.in_task == [True]


async def test_a_parked_coroutine_that_raises_reports_it() -> None:
    context, finished, log = in_context(), Finished(), []
    release: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = context.run(eager.start, parked(release, log), context, asyncio.get_running_loop(), finished)
    release.set_result("fail")
    await task
    [(value, failure)] = finished.calls
    assert value is None and isinstance(failure, ValueError)


async def test_a_cancel_reaches_the_coroutine_even_before_the_tasks_first_step() -> None:
    for steps_first in (0, 1):
        context, finished, log = in_context(), Finished(), []
        release: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        task = context.run(eager.start, parked(release, log), context, asyncio.get_running_loop(), finished)
        for _ in range(steps_first):
            await asyncio.sleep(0)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        assert task.cancelled() and log == ["cancelled"] and finished.calls == []
