"""Randomized simulation: seeded runs of thousands of steps, invariants after every step (see simulation.py)."""

from __future__ import annotations

import os

import pytest

from tests.coordinator.simulation import run

SEEDS = [int(s) for s in os.environ.get("COORDINATOR_SIM_SEEDS", "1,2,3").split(",")]
STEPS = int(os.environ.get("COORDINATOR_SIM_STEPS", "4000"))


@pytest.mark.parametrize("seed", SEEDS)
def test_simulation_invariants_hold(seed: int) -> None:
    sim = run(seed, STEPS)
    assert sim.steps == STEPS
    # The run must have exercised the interesting paths, or it proves little.
    names = set(sim.ctx.events.names())
    assert {"rebalance.started", "rebalance.join_completed", "rebalance.completed", "member.expired"} <= names
    assert max(sim.max_generation.values()) >= 5
