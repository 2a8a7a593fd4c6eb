"""Kafka's ``sasl.jaas.config`` values: ``<LoginModule class> <flag> [key=value ...];`` (Kafka's ``JaasConfig``).

Kafka reads the value with Java's ``StreamTokenizer`` (``//`` and ``/* */`` comments, ``-``, ``_`` and ``$`` added
to the word characters), and that tokenizer's quirks are part of the syntax users write, so they are kept:

* a word is a letter (or ``_``, ``$``, a character above U+009F) followed by letters, digits, ``.``, ``-``, ``_``
  or ``$``: ``org.apache.kafka.common.security.plain.PlainLoginModule`` and ``user_alice=alice-secret`` need no
  quotes;
* a token starting with a digit or ``.`` is a *number*, which has no string value, so ``password=123`` is refused
  with "Value not specified for key 'password'": such values must be quoted;
* ``"..."`` and ``'...'`` are strings with Java escapes (``\\n``, ``\\t``, octal, ``\\\\``), ending at the closing
  quote, a line end or the end of the text;
* a lone ``/`` starts a comment to the end of the line.

A broker's listener config (``listener.name.<listener>.<mechanism>.sasl.jaas.config``) must hold exactly one login
module (Kafka's ``JaasContext``); PLAIN users are its ``user_<name>`` options.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["JaasConfigError", "LoginModule", "parse_jaas_config", "plain_users", "single_login_module"]

_FLAGS = ("REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL")
_OCTAL = "01234567"
_ESCAPES = {"a": "\x07", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\x0b"}


class JaasConfigError(ValueError):
    """A ``sasl.jaas.config`` value Kafka refuses; the message is Kafka's."""


@dataclass(frozen=True, slots=True)
class LoginModule:
    """One entry: the login module's class, its control flag (upper case) and its options."""

    login_module: str
    flag: str
    options: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Token:
    """A word or quoted string (``text`` set), a number (``text`` None) or one ordinary character."""

    kind: Literal["word", "number", "char"]
    text: str | None


def _is_word_start(c: str) -> bool:
    return (c.isascii() and (c.isalpha() or c in "_$")) or (not c.isascii() and ord(c) >= 0xA0)


def _is_word_part(c: str) -> bool:
    return _is_word_start(c) or (c.isdigit() and c.isascii()) or c in ".-"


class _Tokenizer:
    """The subset of Java's ``StreamTokenizer`` that ``JaasConfig`` configures."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._pos = 0

    def _peek(self, offset: int = 0) -> str:
        index = self._pos + offset
        return self._text[index] if index < len(self._text) else ""

    def _skip_blank(self) -> None:
        while self._pos < len(self._text):
            c = self._text[self._pos]
            if ord(c) <= 32:
                self._pos += 1
            elif c == "/" and self._peek(1) == "*":
                end = self._text.find("*/", self._pos + 2)
                self._pos = len(self._text) if end == -1 else end + 2
            elif c == "/":
                while self._pos < len(self._text) and self._text[self._pos] not in "\r\n":
                    self._pos += 1
            else:
                return

    def next(self) -> _Token | None:
        """The next token, or None at the end of the text."""
        self._skip_blank()
        c = self._peek()
        if not c:
            return None
        if c in "\"'":
            return self._quoted(c)
        if (c.isdigit() and c.isascii()) or c in ".-":
            return self._number()
        if _is_word_start(c):
            start = self._pos
            while self._peek() and _is_word_part(self._peek()):
                self._pos += 1
            return _Token("word", self._text[start : self._pos])
        self._pos += 1
        return _Token("char", c)

    def _number(self) -> _Token:
        if self._peek() == "-" and not (self._peek(1).isdigit() or self._peek(1) == "."):
            self._pos += 1
            return _Token("char", "-")
        self._pos += 1
        seen_dot = self._text[self._pos - 1] == "."
        while self._peek().isdigit() or (self._peek() == "." and not seen_dot):
            seen_dot = seen_dot or self._peek() == "."
            self._pos += 1
        return _Token("number", None)

    def _quoted(self, quote: str) -> _Token:
        self._pos += 1
        out: list[str] = []
        while (c := self._peek()) and c not in (quote, "\n", "\r"):
            self._pos += 1
            if c != "\\":
                out.append(c)
                continue
            escaped = self._peek()
            self._pos += 1
            if escaped and escaped in _OCTAL:
                digits = escaped
                limit = 3 if escaped <= "3" else 2
                while len(digits) < limit and self._peek() and self._peek() in _OCTAL:
                    digits += self._peek()
                    self._pos += 1
                out.append(chr(int(digits, 8)))
            else:
                out.append(_ESCAPES.get(escaped, escaped))
        if self._peek() == quote:
            self._pos += 1
        return _Token("word", "".join(out))


def _flag(text: str | None) -> str:
    if text is None:
        raise JaasConfigError("Login module control flag is not available in the JAAS config")
    if text.upper() not in _FLAGS:
        raise JaasConfigError(f"Invalid login module control flag '{text}' in JAAS config")
    return text.upper()


def _entry(tokens: _Tokenizer, first: _Token) -> LoginModule:
    flag_token = tokens.next()
    if flag_token is None:
        raise JaasConfigError("Login module control flag not specified in JAAS config")
    flag = _flag(flag_token.text if flag_token.kind != "char" else None)
    options: dict[str, str] = {}
    token = tokens.next()
    while token is not None and token != _Token("char", ";"):
        key = token.text
        equals = tokens.next()
        value = tokens.next() if equals == _Token("char", "=") else None
        if value is None or value.kind != "word" or value.text is None:
            raise JaasConfigError(f"Value not specified for key '{key}' in JAAS config")
        options[str(key)] = value.text
        token = tokens.next()
    if token is None:
        raise JaasConfigError("JAAS config entry not terminated by semi-colon")
    if not first.text:
        # Java's AppConfigurationEntry refuses it with an IllegalArgumentException that has no message.
        raise JaasConfigError("Login module class not specified in JAAS config")
    return LoginModule(first.text, flag, options)


def parse_jaas_config(text: str) -> list[LoginModule]:
    """Every login module of a ``sasl.jaas.config`` value; raises :class:`JaasConfigError` as Kafka refuses."""
    tokens = _Tokenizer(text)
    entries: list[LoginModule] = []
    while (first := tokens.next()) is not None:
        entries.append(_entry(tokens, first))
    if not entries:
        raise JaasConfigError("Login module not specified in JAAS config")
    return entries


def single_login_module(text: str) -> LoginModule:
    """The one login module a broker's ``sasl.jaas.config`` must hold (Kafka's ``JaasContext``)."""
    entries = parse_jaas_config(text)
    if len(entries) != 1:
        raise JaasConfigError(f"JAAS config property contains {len(entries)} login modules, should be 1 module")
    return entries[0]


def plain_users(module: LoginModule) -> dict[str, str]:
    """PLAIN's users and passwords: the ``user_<name>="<password>"`` options (``PlainServerCallbackHandler``)."""
    prefix = "user_"
    return {key[len(prefix) :]: value for key, value in module.options.items() if key.startswith(prefix)}
