"""The suite's one wait: between two checks it sleeps, or takes the step that makes the condition come true (a
client's poll), and at its deadline it fails naming what it waited for, even when each step itself takes time."""

from __future__ import annotations

import time

import pytest

from tests.support.broker_process import wait_until, wait_until_async, wait_until_awaited


def test_a_step_is_taken_between_checks_instead_of_a_sleep() -> None:
    steps: list[int] = []
    wait_until(lambda: len(steps) == 3, timeout_s=5, interval_s=60, step=lambda: steps.append(1))
    assert steps == [1, 1, 1]


def test_a_wait_whose_steps_never_make_it_true_fails_at_its_deadline_naming_what_and_detail() -> None:
    with pytest.raises(AssertionError) as failed:
        wait_until(
            lambda: False,
            timeout_s=0.05,
            what="the consumer's assignment",
            detail=lambda: "coordinator state REBALANCING",
            step=lambda: time.sleep(0.01),
        )
    assert str(failed.value) == (
        "timed out after 0.05s waiting for the consumer's assignment\ncoordinator state REBALANCING"
    )


async def test_an_async_wait_awaits_its_step_between_checks() -> None:
    steps: list[int] = []

    async def poll() -> None:
        steps.append(1)

    await wait_until_async(lambda: len(steps) == 2, timeout_s=5, interval_s=60, step=poll)
    assert steps == [1, 1]


async def test_an_awaited_wait_fails_at_its_deadline_even_when_it_steps() -> None:
    steps: list[int] = []

    async def never() -> bool:
        return False

    async def poll() -> None:
        steps.append(1)

    with pytest.raises(AssertionError, match=r"^timed out after 0\.05s waiting for the group to form$"):
        await wait_until_awaited(never, timeout_s=0.05, what="the group to form", step=poll)
    assert steps  # it stepped while it waited
