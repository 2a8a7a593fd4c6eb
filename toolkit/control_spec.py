"""How a control is declared: once, as a decorated method of `BrokerControls`, from which the rest is derived.

A control used to be written four times (the controls, the pytest handle, a control API route, the route listing in
a docstring) and the copies drifted (defaults, return values). Now `@control(method, path, answer=...)` on the
implementing method is the only declaration:

* the method's signature (names, type hints, defaults) is the handle's signature and the HTTP body's schema;
* the first line of its docstring is the route listing's description, the whole docstring the handle's;
* `method` and `path` are the HTTP route; `{placeholders}` in the path bind the method's leading parameters in
  order (so the user-facing path can say `{id}` for `group_id`); the other parameters come from the JSON body;
* `answer` turns the result into the HTTP answer (and may refuse it with a `ControlError`: a status and a sentence).

This module is a leaf (stdlib only): the pytest plugin reads the declarations at import time.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])
Answer = Callable[[Any, Mapping[str, Any], Any], Any]
"""(the controls, the arguments the control was called with, its result) -> the JSON answer."""
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


class ControlError(Exception):
    """A control the HTTP caller asked for that cannot be done: answered `{"error": message}` with `status`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class AtLeast:
    """`Annotated[int, AtLeast(1)]`: the smallest value the control API accepts for an integer parameter."""

    low: int


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One route of the control API, as the route listing (`GET /`) and the README show it."""

    method: str
    path: str
    doc: str
    body: str = ""

    def line(self) -> str:
        return " ".join(part for part in (self.method, self.path, self.body, self.doc) if part)


@dataclass(frozen=True, slots=True)
class Control:
    """A declared control: the implementing method's name, its HTTP route and how its result is answered."""

    name: str
    method: str
    path: str
    answer: Answer
    http_defaults: Mapping[str, Any] = field(default_factory=dict)

    def path_params(self, function: Callable[..., Any]) -> list[str]:
        """The parameters bound by the path's placeholders: the method's leading ones, in order."""
        count = len(_PLACEHOLDER.findall(self.path))
        return [p.name for p in list(inspect.signature(function).parameters.values())[1 : 1 + count]]

    def body_params(self, function: Callable[..., Any]) -> list[inspect.Parameter]:
        skip = 1 + len(_PLACEHOLDER.findall(self.path))
        return list(inspect.signature(function).parameters.values())[skip:]

    def endpoint(self, function: Callable[..., Any]) -> Endpoint:
        body = self.body_params(function)
        hint = "{" + ", ".join(f'"{p.name}"' for p in body) + "}" if body else ""
        return Endpoint(self.method, self.path, first_line(function.__doc__), hint)


def first_line(doc: str | None) -> str:
    """A docstring's first line as the listing prints it: no final period, a capital only where a name has one."""
    lines = (doc or "").strip().splitlines()
    line = lines[0].rstrip(".") if lines else ""
    return line[:1].lower() + line[1:] if line[1:2].islower() else line


def control(
    method: str, path: str, *, answer: Answer, http_defaults: Mapping[str, Any] | None = None
) -> Callable[[F], F]:
    """Declare the decorated `BrokerControls` method a control (see the module docstring)."""

    def mark(function: F) -> F:
        spec = Control(function.__name__, method, path, answer, dict(http_defaults or {}))
        placeholders = len(_PLACEHOLDER.findall(path))
        if len(inspect.signature(function).parameters) - 1 < placeholders:
            raise TypeError(f"{function.__name__}: {path} has more placeholders than the method has parameters")
        function.__control__ = spec  # type: ignore[attr-defined]
        return function

    return mark


def declared_controls(cls: type) -> list[Control]:
    """The controls declared on `cls`, in declaration order."""
    found = (getattr(member, "__control__", None) for member in vars(cls).values())
    return [spec for spec in found if isinstance(spec, Control)]
