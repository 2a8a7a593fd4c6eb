"""RE2/J's dialect of RE2, the syntax Kafka's group coordinator compiles SubscribedTopicRegex patterns in.

Kafka uses RE2/J (com.google.re2j); this broker uses C++ RE2 through the `google-re2` binding. The two share one
syntax and one matching semantics (linear time, no backreferences or lookaround), but not quite the same grammar.
A pattern's validity is visible to clients (INVALID_REGULAR_EXPRESSION vs an assignment) and Kafka quotes RE2/J's
description of the error, so this module compiles a pattern as RE2/J would:

- RE2/J refuses, where C++ RE2 accepts: `\\C`; a repetition right after a literal `{` (`{+`); a capture group name
  used twice or not made of ASCII word characters. A one-pass scanner finds these.
- RE2/J accepts, where C++ RE2 refuses: an escaped non-ASCII character (a literal); it is respelled as `\\x{..}`.
- The two word their errors differently: C++ messages are mapped to RE2/J's descriptions, and when both engines
  have an error the first from the left is reported, as each parser does.

Differential tests (tests/coordinator/consumer_group/test_subscriptions_regex_re2j.py) compare verdicts, error
descriptions and matches with the re2j jar the pinned Kafka ships. Known remaining gap: a pattern whose compiled
program exceeds C++ RE2's memory budget (8 MiB) is refused here; RE2/J has no such budget.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import re2

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a client's bad pattern is an answer, not a line on the broker's stderr

# C++ RE2 error code texts (re2.h RE2::ErrorCode) → RE2/J's PatternSyntaxException descriptions, as Kafka words them.
_RE2J_DESCRIPTIONS: Mapping[str, str] = {
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "regexp/syntax: internal error",  # what re2j 1.8 answers for an unopened ")"
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid named capture group": "invalid named capture",
    # C++ RE2's word for an unfinished `\\x{` (a Python str always encodes to valid UTF-8, so it means nothing else)
    "invalid UTF-8": "invalid escape sequence",
}
_INVALID_ESCAPE = "invalid escape sequence"
_MAX_REPEAT = 1000
# Scanning the pattern's own grammar (RE2/J's parseRepeat and group names) with Python's re is safe: these
# expressions are fixed, the user's pattern is only ever compiled by RE2.
_REPEAT = re.compile(r"\{(?P<low>\d+)(?:,(?P<high>\d*))?\}")
_TRAILING_REPEAT = re.compile(r"\{(?P<low>\d+)(?:,(?P<high>\d*))?\}$")
_GROUP_NAME = re.compile(r"[A-Za-z0-9_]+")


class FullMatcher(Protocol):
    """A compiled pattern, as far as topic resolution needs it."""

    def fullmatch(self, text: str) -> object | None: ...


def escape(text: str) -> str:
    """A pattern matching exactly `text`, its metacharacters escaped (valid in both dialects)."""
    escaped: str = re2.escape(text)
    return escaped


def _re2j_description(re2_message: str) -> str:
    """RE2/J's wording of a C++ RE2 error ("<code text>: <offending text>")."""
    code, _, argument = re2_message.partition(": ")
    if code == "invalid perl operator" and argument.startswith("(?<"):
        return "invalid named capture"  # RE2/J reads "(?<" as a named group, so lookbehind fails as one
    if code == "bad repetition operator" and _has_invalid_count(argument):
        return "invalid repeat count"  # RE2/J checks the count of `a*{1001}` before the nesting
    return _RE2J_DESCRIPTIONS.get(code, code)


def _has_invalid_count(text: str) -> bool:
    """Whether `text` ends with a `{n}`, `{n,}` or `{n,m}` repeat that RE2 refuses (over 1000, or m < n)."""
    match = _TRAILING_REPEAT.search(text)
    if match is None:
        return False
    low, high = int(match["low"]), match["high"]
    return low > _MAX_REPEAT or (bool(high) and (int(high) > _MAX_REPEAT or int(high) < low))


def _re2_fails_before(pattern: str, position: int) -> bool:
    """Whether C++ RE2's first error lies before `position` (a token boundary) in `pattern`: the text before it
    already fails, other than by being cut short (an unclosed group or class)."""
    try:
        re2.compile(pattern[:position], _RE2_OPTIONS)
    except re2.error as error:
        return _re2_message(error).partition(": ")[0] not in ("missing )", "missing ]")
    return False


def _re2_message(error: Exception) -> str:
    raw = error.args[0] if error.args else b""
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)


@dataclass(frozen=True, slots=True)
class _Re2jReading:
    """A pattern as RE2/J reads it, for the C++ engine: the text to compile and RE2/J's own first refusal."""

    for_re2: str
    """The pattern with RE2/J-only syntax spelled for C++ RE2 (an escaped non-ASCII character as `\\x{...}`)."""

    refusal: tuple[int, str] | None
    """(position in `for_re2`, RE2/J's description) of the first error RE2/J raises and C++ RE2 does not."""


class _Re2jScanner:
    """One left-to-right pass over a pattern, tracking what RE2/J's parser tracks where the two engines differ.

    Only the differences listed in the module's docstring are tracked (RE2/J counts a literal `{` as a repetition
    operator, hence `{+`); everything else is left to RE2, whose verdict is then the same as RE2/J's."""

    def __init__(self, regex: str) -> None:
        self._regex = regex
        self._index = 0
        self._out: list[str] = []
        self._length = 0
        self._names: set[str] = set()
        self.refusal: tuple[int, str] | None = None

    def scan(self) -> _Re2jReading:
        regex = self._regex
        while self._index < len(regex):
            if regex.startswith("\\Q", self._index):
                end = regex.find("\\E", self._index + 2)
                self._emit(len(regex) if end < 0 else end + 2)  # quoted text is literal in both engines
            elif regex[self._index] == "\\":
                self._escape()
            elif regex[self._index] == "[":
                self._character_class()
            elif regex[self._index] == "(":
                self._group()
            elif regex[self._index] == "{":
                self._brace()
            else:
                self._emit(self._index + 1)
        return _Re2jReading("".join(self._out), self.refusal)

    def _emit(self, end: int, text: str | None = None) -> None:
        piece = self._regex[self._index : end] if text is None else text
        self._out.append(piece)
        self._length += len(piece)
        self._index = end

    def _refuse(self, description: str) -> None:
        if self.refusal is None:
            self.refusal = (self._length, description)

    def _escape(self) -> None:
        escaped = self._regex[self._index + 1 : self._index + 2]
        if escaped == "C":
            self._refuse(_INVALID_ESCAPE)
        if escaped and not escaped.isascii():
            self._emit(self._index + 2, f"\\x{{{ord(escaped):X}}}")
            return
        end = self._index + 2
        if escaped in ("p", "P", "x") and self._regex.startswith("{", end):
            close = self._regex.find("}", end)
            end = len(self._regex) if close < 0 else close + 1  # `\\p{Greek}`: its braces are no repetition
        self._emit(end)

    def _character_class(self) -> None:
        regex = self._regex
        self._emit(self._index + 1)
        if regex.startswith("^", self._index):
            self._emit(self._index + 1)
        if regex.startswith("]", self._index):
            self._emit(self._index + 1)  # a leading "]" is a literal
        while self._index < len(regex) and regex[self._index] != "]":
            if regex.startswith("[:", self._index) and (close := regex.find(":]", self._index + 2)) >= 0:
                self._emit(close + 2)
            elif regex[self._index] == "\\":
                self._escape()
            else:
                self._emit(self._index + 1)
        self._emit(min(self._index + 1, len(regex)))

    def _group(self) -> None:
        regex = self._regex
        for opening in ("(?P<", "(?<"):
            if regex.startswith(opening, self._index) and not regex.startswith(("(?<=", "(?<!"), self._index):
                start = self._index + len(opening)
                close = regex.find(">", start)
                if close >= 0:
                    name = regex[start:close]
                    if _GROUP_NAME.fullmatch(name) is None:
                        self._refuse("invalid named capture")
                    elif name in self._names:
                        self._refuse("duplicate capture group name")
                    self._names.add(name)
                    self._emit(close + 1)
                    return
        self._emit(self._index + 1)

    def _brace(self) -> None:
        repeat = _REPEAT.match(self._regex, self._index)
        if repeat is not None:
            self._emit(repeat.end())
            return
        self._emit(self._index + 1)  # not a repeat: a literal "{"
        following = _REPEAT.match(self._regex, self._index)
        if self._regex.startswith(("*", "+", "?"), self._index) or (
            following is not None and not _has_invalid_count(following.group())  # RE2/J checks the count first
        ):
            self._refuse("invalid nested repetition operator")


def compile_re2j(regex: str) -> FullMatcher | str:
    """The pattern compiled as RE2/J would accept it, or RE2/J's description of why it is refused."""
    reading = _Re2jScanner(regex).scan()
    try:
        compiled: FullMatcher = re2.compile(reading.for_re2, _RE2_OPTIONS)
    except UnicodeEncodeError:  # a lone surrogate: RE2 takes UTF-8 only
        return "invalid UTF-8"
    except re2.error as error:
        # Both engines report the first error from the left: RE2/J's own refusal wins if C++ RE2's lies after it.
        if reading.refusal is not None and not _re2_fails_before(reading.for_re2, reading.refusal[0]):
            return reading.refusal[1]
        return _re2j_description(_re2_message(error))
    return compiled if reading.refusal is None else reading.refusal[1]
