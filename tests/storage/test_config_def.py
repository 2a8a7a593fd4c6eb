"""Kafka's ConfigDef rules (storage/config_def.py): Java's number grammars, canonical text, validators' words."""

from __future__ import annotations

import re

import pytest

from storage.config_def import ConfigType, Range, ValidList, format_value, java_double, parse_value
from storage.errors import InvalidConfigError


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1.0"),
        (0.5, "0.5"),
        (1e-5, "1.0E-5"),
        (0.001, "0.001"),
        (0.0009, "9.0E-4"),
        (9999999.0, "9999999.0"),
        (1e7, "1.0E7"),
        (12345678.0, "1.2345678E7"),
        (1.7976931348623157e308, "1.7976931348623157E308"),
        (-2.5, "-2.5"),
        (0.0, "0.0"),
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
    ],
)
def test_doubles_print_as_java_prints_them(value: float, text: str) -> None:
    assert java_double(value) == text


@pytest.mark.parametrize(
    ("config_type", "raw", "value"),
    [
        (ConfigType.LONG, " +42 ", 42),
        (ConfigType.INT, "-2147483648", -(1 << 31)),
        (ConfigType.SHORT, "32767", 32767),
        (ConfigType.DOUBLE, "1d", 1.0),
        (ConfigType.DOUBLE, "0x1p-3", 0.125),
        (ConfigType.DOUBLE, ".5", 0.5),
        (ConfigType.DOUBLE, "-Infinity", float("-inf")),
        (ConfigType.BOOLEAN, "TRUE", True),
        (ConfigType.LIST, "", ()),
        (ConfigType.LIST, " a ,b , ", ("a", "b", "")),
        (ConfigType.STRING, "  x ", "x"),
    ],
)
def test_java_grammars(config_type: ConfigType, raw: str, value: object) -> None:
    assert parse_value(config_type, raw, "k") == value


@pytest.mark.parametrize(
    ("config_type", "raw"),
    [
        (ConfigType.LONG, "1_000"),
        (ConfigType.LONG, "\u0663"),  # an Arabic-Indic digit: Python's int() reads it, Java's parseLong does not
        (ConfigType.LONG, "9223372036854775808"),
        (ConfigType.SHORT, "32768"),
        (ConfigType.DOUBLE, "nan"),
        (ConfigType.DOUBLE, "inf"),
        (ConfigType.DOUBLE, "1_0"),
        (ConfigType.BOOLEAN, "yes"),
    ],
)
def test_what_java_refuses(config_type: ConfigType, raw: str) -> None:
    with pytest.raises(InvalidConfigError, match=f"^Invalid value {re.escape(raw)} for configuration k: "):
        parse_value(config_type, raw, "k")


def test_lists_join_with_bare_commas() -> None:
    assert format_value(ConfigType.LIST, ("a", "b")) == "a,b"
    assert format_value(ConfigType.BOOLEAN, False) == "false"
    assert format_value(ConfigType.LONG, None) is None


def test_validators_speak_kafkas_words() -> None:
    with pytest.raises(InvalidConfigError, match=r"Value must be no more than 9$"):
        Range(1, 9)("k", 10)
    assert ValidList(("a", "b"))("k", ("b", "a", "b")) == ("b", "a")
    with pytest.raises(InvalidConfigError, match=r"^Configuration 'k' must not be empty\.$"):
        ValidList(("a",), allow_empty=False)("k", ())
