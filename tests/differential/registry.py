"""The scenario registry: each scenario is an async function of a `Session`, registered with `@scenario`."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from tests.differential.compare import Difference
from tests.differential.session import Session

ScenarioFn = Callable[[Session], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Known:
    """A difference from Kafka a scenario pins: the field's path, both answers, and why (fixed or deliberate)."""

    path: str
    ours: Any
    kafka: Any
    why: str

    def difference(self) -> Difference:
        return Difference(self.path, self.ours, self.kafka)


@dataclass(frozen=True, slots=True)
class Scenario:
    """A named scenario; ``covers`` says which rule (#N), timeline (T1-T5) or API it exercises; ``known`` are the
    differences from Kafka it pins (the test fails if one disappears or another appears)."""

    name: str
    covers: str
    run: ScenarioFn
    doc: str
    known: tuple[Known, ...] = ()
    settings: dict[str, str] | None = None
    """Broker settings of its own (a pair of brokers started for it), or None for the shared settings."""
    early: bool = False
    """It waits out real time: compared in the background from collection on (tests/differential/early.py)."""


SCENARIOS: dict[str, Scenario] = {}


def scenario(
    covers: str, known: tuple[Known, ...] = (), settings: dict[str, str] | None = None, early: bool = False
) -> Callable[[ScenarioFn], ScenarioFn]:
    """Register the decorated function under its name (which must be unique) as covering ``covers``."""

    def register(fn: ScenarioFn) -> ScenarioFn:
        name = fn.__name__
        if name in SCENARIOS:
            raise ValueError(f"two scenarios are called {name!r}")
        SCENARIOS[name] = Scenario(name, covers, fn, (fn.__doc__ or "").strip(), known, settings, early)
        return fn

    return register


def load_all() -> dict[str, Scenario]:
    """Import every module of ``tests.differential.scenarios`` so their scenarios register."""
    from tests.differential import scenarios

    for module in pkgutil.iter_modules(scenarios.__path__):
        importlib.import_module(f"{scenarios.__name__}.{module.name}")
    return SCENARIOS
