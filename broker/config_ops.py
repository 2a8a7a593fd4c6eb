"""The request-side steps of AlterConfigs and IncrementalAlterConfigs, in Kafka's order and words.

Both APIs first refuse a key named twice and a null value (INVALID_REQUEST). IncrementalAlterConfigs then turns its
operations into the resource's new set of overrides: SET and DELETE a key, APPEND items to a list or SUBTRACT them
(only on LIST keys, starting from the key's default when it is not set; Kafka's ``ConfigurationControlManager``).
Kafka words the refusals of these operations differently for topics (its controller) and broker resources (the
broker's own check), so each has its rules here. What the resulting set may hold is checked afterwards, by the
topic catalogue or :class:`broker.dynamic_config.DynamicConfigs`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum

from broker.dynamic_config import ConfigRequestError
from protocol.errors import ErrorCode

__all__ = ["BrokerRules", "Op", "Operation", "TopicRules", "apply_operations", "check_keys_and_values"]


class Operation(IntEnum):
    """IncrementalAlterConfigs' ``config_operation`` (Kafka's ``AlterConfigOp.OpType``)."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


@dataclass(frozen=True, slots=True)
class Op:
    """One requested change; AlterConfigs' entries are SETs."""

    name: str
    operation: int
    value: str | None


def check_keys_and_values(ops: Sequence[Op]) -> None:
    """Kafka's first checks of any alter request: no key twice, no null value but for DELETE."""
    if any(count > 1 for count in Counter(op.name for op in ops).values()):
        raise ConfigRequestError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
    for op in ops:
        if op.value is None and op.operation != Operation.DELETE:
            raise ConfigRequestError(ErrorCode.INVALID_REQUEST, f"Null value not supported for : {op.name}")


@dataclass(frozen=True, slots=True)
class TopicRules:
    """How a topic resource refuses an operation (the controller's words)."""

    is_list: Callable[[str], bool]

    def check(self, op: Op) -> None:
        if op.operation not in tuple(Operation):
            raise ConfigRequestError(ErrorCode.UNKNOWN_SERVER_ERROR, None)  # Kafka's controller fails on it
        if op.operation in (Operation.APPEND, Operation.SUBTRACT) and not self.is_list(op.name):
            kind = Operation(op.operation).name
            raise ConfigRequestError(
                ErrorCode.INVALID_CONFIG, f"Can't {kind} to key {op.name} because its type is not LIST."
            )


@dataclass(frozen=True, slots=True)
class BrokerRules:
    """How a broker resource refuses an operation (the broker's own check, before its controller sees it)."""

    is_list: Callable[[str], bool]
    is_known: Callable[[str], bool]

    def check(self, op: Op) -> None:
        if op.operation not in tuple(Operation):
            raise ConfigRequestError(ErrorCode.INVALID_REQUEST, f"Unknown operations type {op.operation}")
        if op.operation in (Operation.APPEND, Operation.SUBTRACT):
            if not self.is_known(op.name):
                raise ConfigRequestError(ErrorCode.INVALID_CONFIG, f"Unknown config name: {op.name}")
            if not self.is_list(op.name):
                kind = Operation(op.operation).name.lower()
                raise ConfigRequestError(
                    ErrorCode.INVALID_CONFIG, f"Config value {kind} is not allowed for config key: {op.name}"
                )


def _items(text: str) -> list[str]:
    return [] if text == "" else text.split(",")


def apply_operations(
    current: Mapping[str, str],
    ops: Sequence[Op],
    rules: TopicRules | BrokerRules,
    default: Callable[[str], str | None],
) -> tuple[dict[str, str], frozenset[str]]:
    """The resource's overrides after ``ops``, and the keys they set (SET, APPEND, SUBTRACT).

    APPEND adds the items not there yet, SUBTRACT removes the ones given (unknown items are ignored); both start
    from the key's current override, else its ``default``.
    """
    result = dict(current)
    for op in ops:
        rules.check(op)
    for op in ops:
        if op.operation == Operation.DELETE:
            result.pop(op.name, None)
            continue
        assert op.value is not None
        if op.operation == Operation.SET:
            result[op.name] = op.value
            continue
        base = result.get(op.name, default(op.name) or "")
        items = _items(base)
        given = op.value.split(",")
        if op.operation == Operation.APPEND:
            items += [item for item in given if item not in items]
        else:
            items = [item for item in items if item not in given]
        result[op.name] = ",".join(items)
    set_keys = frozenset(op.name for op in ops if op.operation != Operation.DELETE)
    return result, set_keys
