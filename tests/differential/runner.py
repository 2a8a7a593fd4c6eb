"""Run scenarios against one broker, or against two at once and compare."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from tests.differential.compare import Difference, differences
from tests.differential.registry import Scenario
from tests.differential.session import Session, Step

SCENARIO_TIMEOUT_S = 90.0


@dataclass(frozen=True, slots=True)
class Target:
    host: str
    port: int

    @classmethod
    def parse(cls, text: str) -> Target:
        host, _, port = text.rpartition(":")
        return cls(host or "127.0.0.1", int(port))


async def run_one(scenario: Scenario, target: Target, token: str, settings: dict[str, str]) -> list[Step]:
    """The scenario's normalised transcript; an exception ends it with an ``error`` step instead of escaping."""
    session = Session(target.host, target.port, token, settings)
    try:
        await asyncio.wait_for(scenario.run(session), SCENARIO_TIMEOUT_S)
    except Exception as exc:  # a broker's odd answer must show up in the diff, not abort the run
        session.record("error", {"error": f"{type(exc).__name__}: {exc}"})
    finally:
        await session.close()
    return session.transcript()


@dataclass(frozen=True, slots=True)
class Comparison:
    scenario: Scenario
    ours: list[Step]
    kafka: list[Step]

    @property
    def differences(self) -> list[Difference]:
        return differences(self.ours, self.kafka)


async def compare(scenario: Scenario, ours: Target, kafka: Target, settings: dict[str, str]) -> Comparison:
    """Both brokers at the same time, with the same names: timings line up and the run takes one scenario's time."""
    token = secrets.token_hex(4)
    a, b = await asyncio.gather(run_one(scenario, ours, token, settings), run_one(scenario, kafka, token, settings))
    return Comparison(scenario, a, b)


async def compare_all(
    scenarios: Iterable[Scenario], ours: Target, kafka: Target, settings: dict[str, str], parallel: int = 6
) -> dict[str, Comparison]:
    """Every scenario, ``parallel`` at a time (each uses its own groups and topics, so they do not interfere)."""
    gate = asyncio.Semaphore(parallel)

    async def one(s: Scenario) -> Comparison:
        async with gate:
            return await compare(s, ours, kafka, settings)

    results = await asyncio.gather(*(one(s) for s in scenarios))
    return {c.scenario.name: c for c in results}
