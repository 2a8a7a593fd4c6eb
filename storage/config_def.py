"""Kafka's config value types, parsing, validators and canonical text (its ``ConfigDef``), for topic and broker keys.

A config value arrives as text (CreateTopics, AlterConfigs, ``server.properties``). Kafka parses it by the key's
type, checks it with the key's validator, and from then on shows it in a canonical form: the number without its
surrounding blanks or ``+`` sign, a double as Java prints it (``1.0E-5``), a list joined by bare commas. Clients
see that text in DescribeConfigs and compare error messages with Kafka's, so both are reproduced here: the type
ids DescribeConfigs carries (:class:`ConfigType`), the parse rules of ``ConfigDef.parseType`` (Java's number
grammars, not Python's, which would accept ``1_000`` or ``٣``), the validators' messages, and
``ConfigDef.convertToString``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import IntEnum

from storage.errors import InvalidConfigError

__all__ = [
    "INT16_MAX",
    "INT16_MIN",
    "INT32_MAX",
    "INT32_MIN",
    "INT64_MAX",
    "INT64_MIN",
    "ConfigType",
    "ConfigValue",
    "InvalidValueError",
    "OneOf",
    "Range",
    "RangeOrExactly",
    "ThrottledReplicas",
    "ValidList",
    "Validator",
    "check",
    "format_value",
    "invalid",
    "java_double",
    "parse_value",
]

INT16_MIN, INT16_MAX = -(1 << 15), (1 << 15) - 1
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

#: A parsed value: bool, int, float, str, or a list as a tuple of str; None for "not set".
ConfigValue = bool | int | float | str | tuple[str, ...] | None


class ConfigType(IntEnum):
    """Kafka's ``ConfigDef.Type`` with the ids DescribeConfigs v3+ carries in ``config_type``."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+")
# Java's Double.parseDouble grammar (FloatingDecimal): decimal or hexadecimal significand, optional exponent,
# optional type suffix, NaN and Infinity with an optional sign.
_JAVA_DECIMAL = re.compile(r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?)")
_JAVA_HEX = re.compile(r"([+-]?)0[xX]([0-9a-fA-F]*\.?[0-9a-fA-F]*)[pP]([+-]?[0-9]+)[fFdD]?")
_LIST_SEPARATOR = re.compile(r"\s*,\s*")
_BOUNDS = {ConfigType.SHORT: (INT16_MIN, INT16_MAX), ConfigType.INT: (INT32_MIN, INT32_MAX)}


class InvalidValueError(InvalidConfigError):
    """Kafka's ``ConfigException(name, value, message)``: ``Invalid value <v> for configuration <name>: <why>``;
    ``reason`` is the part after the colon (what a startup error quotes)."""

    def __init__(self, name: str, shown: object, reason: str) -> None:
        super().__init__(f"Invalid value {shown} for configuration {name}: {reason}")
        self.reason = reason


def invalid(name: str, shown: object, reason: str) -> InvalidValueError:
    return InvalidValueError(name, shown, reason)


def _java_strip(raw: str) -> str:
    """Java's ``String.trim``: only characters up to U+0020 count as blanks."""
    start, end = 0, len(raw)
    while start < end and raw[start] <= " ":
        start += 1
    while end > start and raw[end - 1] <= " ":
        end -= 1
    return raw[start:end]


def _java_double(text: str, name: str, raw: str) -> float:
    hexadecimal = _JAVA_HEX.fullmatch(text)
    if hexadecimal is not None and hexadecimal[2] not in ("", "."):
        sign, digits, exponent = hexadecimal.groups()
        return float.fromhex(f"{sign}0x{digits}p{exponent}")
    if _JAVA_DECIMAL.fullmatch(text) is None:
        raise invalid(name, raw, "Not a number of type DOUBLE")
    return float(text.rstrip("fFdD").replace("Infinity", "inf"))


def parse_value(config_type: ConfigType, raw: str, name: str) -> ConfigValue:
    """Kafka's ``ConfigDef.parseType`` of a text value; raises InvalidConfigError with Kafka's message."""
    text = _java_strip(raw)
    if config_type is ConfigType.BOOLEAN:
        if text.lower() not in ("true", "false"):
            raise invalid(name, raw, "Expected value to be either true or false")
        return text.lower() == "true"
    if config_type in (ConfigType.STRING, ConfigType.CLASS, ConfigType.PASSWORD):
        return text
    if config_type in (ConfigType.SHORT, ConfigType.INT, ConfigType.LONG):
        low, high = _BOUNDS.get(config_type, (INT64_MIN, INT64_MAX))
        if _JAVA_INTEGER.fullmatch(text) is None or not low <= int(text) <= high:
            raise invalid(name, raw, f"Not a number of type {config_type.name}")
        return int(text)
    if config_type is ConfigType.DOUBLE:
        return _java_double(text, name, raw)
    if config_type is ConfigType.LIST:
        return () if not text else tuple(_LIST_SEPARATOR.split(text))
    raise AssertionError(f"no parser for {config_type!r}")


def java_double(value: float) -> str:
    """Java's ``Double.toString``: plain from 10^-3 up to 10^7, ``d.dddE<n>`` outside, ``NaN``, ``Infinity``; the
    shortest digits that read back as the same double (Python's ``repr`` finds them)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0.0"
    _, digit_tuple, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    scientific = len(digits) - 1 + exponent
    if 1e-3 <= abs(value) < 1e7:
        if scientific >= 0:
            whole = digits[: scientific + 1].ljust(scientific + 1, "0")
            return f"{sign}{whole}.{digits[scientific + 1 :] or '0'}"
        return f"{sign}0.{'0' * (-scientific - 1)}{digits}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{scientific}"


def format_value(config_type: ConfigType, value: ConfigValue) -> str | None:
    """Kafka's ``ConfigDef.convertToString``: the canonical text DescribeConfigs shows."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(value)
    if isinstance(value, float) or config_type is ConfigType.DOUBLE:
        return java_double(float(value))
    return str(value)


def _shown(value: ConfigValue) -> str:
    """A parsed value as Java's ``toString`` prints it in an error message (a list as ``[a, b]``)."""
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]"
    if isinstance(value, float):
        return java_double(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


#: A validator checks a parsed value and may normalise it (ValidList drops repeated entries); it raises
#: InvalidConfigError with Kafka's message.
Validator = Callable[[str, ConfigValue], ConfigValue]


@dataclass(frozen=True, slots=True)
class Range:
    """Kafka's ``ConfigDef.Range``: ``at_least``/``between``; NaN passes, as Java's comparisons let it."""

    low: int | None = None
    high: int | None = None

    def __call__(self, name: str, value: ConfigValue) -> ConfigValue:
        if value is None:
            return value
        assert isinstance(value, int | float)
        if self.low is not None and value < self.low:
            raise invalid(name, _shown(value), f"Value must be at least {self.low}")
        if self.high is not None and value > self.high:
            raise invalid(name, _shown(value), f"Value must be no more than {self.high}")
        return value

    def __str__(self) -> str:
        low = "..." if self.low is None else self.low
        return f"[{low},...]" if self.high is None else f"[{low},...,{self.high}]"


@dataclass(frozen=True, slots=True)
class OneOf:
    """Kafka's ``ConfigDef.ValidString``: one of a fixed set (case-sensitive)."""

    choices: tuple[str, ...]

    def __call__(self, name: str, value: ConfigValue) -> ConfigValue:
        if value not in self.choices:
            raise invalid(name, _shown(value), f"String must be one of: {', '.join(self.choices)}")
        return value

    def __str__(self) -> str:
        return "[" + ", ".join(self.choices) + "]"


@dataclass(frozen=True, slots=True)
class ValidList:
    """Kafka 4's ``ConfigDef.ValidList``: every entry one of ``choices``, none empty, repeats dropped (first kept);
    an empty list only where ``allow_empty``."""

    choices: tuple[str, ...]
    allow_empty: bool = True

    def __call__(self, name: str, value: ConfigValue) -> ConfigValue:
        assert isinstance(value, tuple)
        if not value and not self.allow_empty:
            raise InvalidConfigError(f"Configuration '{name}' must not be empty.")
        if any(item == "" for item in value):
            raise InvalidConfigError(f"Configuration '{name}' values must not be empty.")
        for item in value:
            if item not in self.choices:
                raise invalid(name, item, f"String must be one of: {', '.join(self.choices)}")
        return tuple(dict.fromkeys(value))

    def __str__(self) -> str:
        return "[" + ", ".join(self.choices) + "]"


_REPLICA = re.compile(r"[0-9]+:[0-9]+")


@dataclass(frozen=True, slots=True)
class ThrottledReplicas:
    """Kafka's ``ThrottledReplicaListValidator``: ``*`` alone, or ``partition:broker`` pairs (empty entries pass)."""

    def __call__(self, name: str, value: ConfigValue) -> ConfigValue:
        assert isinstance(value, tuple)
        if value == ("*",) or all(item == "" or _REPLICA.fullmatch(item) for item in value):
            return value
        raise invalid(
            name,
            _shown(value),
            f"{name} must be the literal '*' or a list of replicas in the following format: "
            "[partitionId]:[brokerId],[partitionId]:[brokerId],...",
        )

    def __str__(self) -> str:
        return "[partitionId]:[brokerId],[partitionId]:[brokerId],..."


@dataclass(frozen=True, slots=True)
class RangeOrExactly:
    """A range plus one extra allowed value (Kafka's ``compression.gzip.level``: ``[1,...,9] or -1``)."""

    range: Range
    exactly: int

    def __call__(self, name: str, value: ConfigValue) -> ConfigValue:
        if value == self.exactly:
            return value
        assert isinstance(value, int)
        if (self.range.low is not None and value < self.range.low) or (
            self.range.high is not None and value > self.range.high
        ):
            raise invalid(
                name, value, f"Value must be between {self.range.low} and {self.range.high} or equal to {self.exactly}"
            )
        return value

    def __str__(self) -> str:
        return f"{self.range} or {self.exactly}"


def check(name: str, config_type: ConfigType, raw: str, validators: Sequence[Validator] = ()) -> ConfigValue:
    """Parse ``raw`` as ``config_type`` and run the validators on it: the value Kafka would store."""
    value = parse_value(config_type, raw, name)
    for validate in validators:
        value = validate(name, value)
    return value
