"""The generated message classes write out `__init__`, `__repr__` and `__eq__` (protocol/codegen.py,
`DATACLASS_OPTIONS`) instead of letting `dataclasses` build them with `exec` at import, which was most of the broker's
start. Each class must behave exactly as the plain `@dataclass(slots=True, kw_only=True)` it replaces: this checks
every class of every generated module against such a twin, made by `dataclasses` from the same fields."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Iterator
from typing import Any

import pytest

from protocol.messages import MODULES


def _generated_classes() -> Iterator[type[Any]]:
    for name in MODULES:
        module = importlib.import_module(f"protocol.messages.{name}")
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == module.__name__ and dataclasses.is_dataclass(value):
                yield value


CLASSES = sorted(_generated_classes(), key=lambda cls: (cls.__module__, cls.__qualname__))


def _twin(cls: type[Any]) -> type[Any]:
    """What `@dataclass(slots=True, kw_only=True)` makes from the class's fields."""
    specs = []
    for f in dataclasses.fields(cls):
        if f.default_factory is not dataclasses.MISSING:
            spec = dataclasses.field(default_factory=f.default_factory, repr=f.repr, compare=f.compare)
        else:
            spec = dataclasses.field(default=f.default, repr=f.repr, compare=f.compare)
        specs.append((f.name, f.type, spec))
    return dataclasses.make_dataclass(cls.__qualname__, specs, slots=True, kw_only=True)


def test_every_generated_module_has_classes() -> None:
    assert len(CLASSES) > 250


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: f"{cls.__module__.rsplit('.', 1)[1]}.{cls.__qualname__}")
def test_generated_class_behaves_as_its_dataclass_twin(cls: type[Any]) -> None:
    twin = _twin(cls)
    assert cls.__match_args__ == twin.__match_args__ == ()
    assert cls.__hash__ is None and twin.__hash__ is None
    assert cls.__slots__ == twin.__slots__
    ours_params = list(inspect.signature(cls).parameters.values())
    twin_params = list(inspect.signature(twin).parameters.values())
    assert [(p.name, p.kind) for p in ours_params] == [(p.name, p.kind) for p in twin_params]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in ours_params)

    ours, theirs = cls(), twin()
    names = [f.name for f in dataclasses.fields(cls)]
    assert [getattr(ours, n) for n in names] == [getattr(theirs, n) for n in names]
    assert repr(ours) == repr(theirs)
    assert ours == cls() and theirs == twin()
    assert ours.__eq__(theirs) is NotImplemented and ours != object()
    for f in dataclasses.fields(cls):
        if f.default_factory is not dataclasses.MISSING:  # a fresh value per instance, as the factory makes it
            assert getattr(cls(), f.name) is not getattr(ours, f.name)
        marker = object()
        changed, twin_changed = cls(**{f.name: marker}), twin(**{f.name: marker})
        assert getattr(changed, f.name) is marker
        assert (changed == ours) is (twin_changed == theirs) is False
        assert changed == cls(**{f.name: marker})
        assert repr(changed) == repr(twin_changed)
        assert dataclasses.replace(changed) == changed
    assert dataclasses.asdict(ours) == dataclasses.asdict(theirs)
