"""Regular-expression subscriptions of consumer-protocol members (KIP-848 `SubscribedTopicRegex`), as Kafka 4 does.

A member may subscribe by pattern instead of by topic list; the coordinator, not the client, turns the pattern into
topics, so that every member of a group sees the same topics and topics created later join the subscription. Kafka
compiles the pattern with RE2/J (com.google.re2j, not java.util.regex) and keeps the topics it matches as a whole
(`matcher(topic).matches()`). It filters the result by ACLs only: internal topics such as `__consumer_offsets` are
resolved like any other topic if the pattern matches them. A pattern that does not compile is refused with
INVALID_REGULAR_EXPRESSION when a member first brings it to the group; a null or empty pattern means "no pattern".

RE2/J and C++ RE2 (the `google-re2` binding used here) share one syntax with two gaps this module closes, because a
pattern's validity is visible to clients (an error vs an assignment): C++ RE2 accepts `\\C` (any byte) where RE2/J
refuses it, and the two word their errors differently, so C++ messages are mapped to RE2/J's descriptions, the text
Kafka puts in its error message. A pattern larger than RE2's memory budget (8 MiB compiled) is refused here where
RE2/J, without such a budget, would accept it.

Sans-IO and pure apart from a bounded cache of compiled patterns, keyed by the pattern's text: a group's members
usually share one pattern, and every metadata change re-resolves it against all topics.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

import re2

from protocol.errors import ErrorCode

DEFAULT_MAX_CACHED = 256
"""Compiled patterns kept by a resolver. A pattern is per group (shared by its members), so this bounds memory by
the number of distinct patterns in use, not by members; RE2 programs are small for topic-name patterns."""

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
}
_INVALID_ESCAPE = "invalid escape sequence"
_INVALID_UTF8 = "invalid UTF-8"


@dataclass(frozen=True, slots=True)
class InvalidRegularExpression:
    """A pattern Kafka would refuse: the heartbeat that brings it fails with INVALID_REGULAR_EXPRESSION (128)."""

    regex: str
    description: str
    """RE2/J's description of the syntax error (PatternSyntaxException.getDescription())."""

    @property
    def error_code(self) -> ErrorCode:
        return ErrorCode.INVALID_REGULAR_EXPRESSION

    @property
    def message(self) -> str:
        """The error message Kafka sends back (Utils.throwIfRegularExpressionIsInvalid)."""
        return f"SubscribedTopicRegex `{self.regex}` is not a valid regular expression: {self.description}."


@dataclass(frozen=True, slots=True)
class RegexResolution:
    """Several patterns resolved against one topic list, as Kafka's resolver refreshes a group's patterns at once."""

    topics: Mapping[str, tuple[str, ...]]
    """Every requested pattern → its matching topics, sorted. An invalid pattern maps to () as in Kafka, which
    logs it and resolves the others rather than failing them all."""

    invalid: tuple[InvalidRegularExpression, ...]
    """The requested patterns that did not compile, sorted by pattern, for the caller to log."""


class _FullMatcher(Protocol):
    def fullmatch(self, text: str) -> object | None: ...


def is_regex_subscription(regex: str | None) -> bool:
    """Whether a member's SubscribedTopicRegex subscribes to anything: Kafka reads null and "" alike as no pattern
    (GroupMetadataManager.isNotEmpty); the Java consumer sends "" to drop its pattern."""
    return bool(regex)


def _re2j_description(re2_message: str) -> str:
    """RE2/J's wording of a C++ RE2 error ("<code text>: <offending text>")."""
    code, _, argument = re2_message.partition(": ")
    if code == "invalid perl operator" and argument.startswith("(?<"):
        return "invalid named capture"  # RE2/J reads "(?<" as a named group, so lookbehind fails as one
    return _RE2J_DESCRIPTIONS.get(code, code)


def _refused_by_re2j_only(regex: str) -> str | None:
    """The error RE2/J raises for a pattern C++ RE2 compiled: `\\C` outside `\\Q...\\E` quoting."""
    index, quoted = 0, False
    while index < len(regex):
        if quoted:
            if regex.startswith("\\E", index):
                quoted = False
                index += 2
            else:
                index += 1
            continue
        if regex[index] == "\\":
            escaped = regex[index + 1 : index + 2]
            if escaped == "C":
                return _INVALID_ESCAPE
            quoted = escaped == "Q"
            index += 2
            continue
        index += 1
    return None


def _compile(regex: str) -> _FullMatcher | InvalidRegularExpression:
    try:
        compiled: _FullMatcher = re2.compile(regex, _RE2_OPTIONS)
    except UnicodeEncodeError:  # a lone surrogate: RE2 takes UTF-8 only
        return InvalidRegularExpression(regex, _INVALID_UTF8)
    except re2.error as error:
        raw = error.args[0] if error.args else b""
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        return InvalidRegularExpression(regex, _re2j_description(text))
    refused = _refused_by_re2j_only(regex)
    return compiled if refused is None else InvalidRegularExpression(regex, refused)


class TopicRegexResolver:
    """Validates and resolves patterns, keeping the most recently used compiled patterns (and refusals)."""

    def __init__(self, max_cached: int = DEFAULT_MAX_CACHED) -> None:
        if max_cached < 1:
            raise ValueError(f"max_cached must be positive, got {max_cached}")
        self._max_cached = max_cached
        self._cache: OrderedDict[str, _FullMatcher | InvalidRegularExpression] = OrderedDict()

    @staticmethod
    def literal(topic: str) -> str:
        """A pattern matching exactly `topic` (its metacharacters escaped)."""
        escaped: str = re2.escape(topic)
        return escaped

    def cached(self) -> tuple[str, ...]:
        """The cached patterns, least recently used first."""
        return tuple(self._cache)

    def validate(self, regex: str) -> InvalidRegularExpression | None:
        """Kafka's check of a member's new pattern: None when RE2/J would compile it."""
        compiled = self._compiled(regex)
        return compiled if isinstance(compiled, InvalidRegularExpression) else None

    def resolve(self, regex: str, topic_names: Iterable[str]) -> tuple[str, ...] | InvalidRegularExpression:
        """The topics `regex` matches as a whole, sorted and without duplicates, or why it is invalid."""
        compiled = self._compiled(regex)
        if isinstance(compiled, InvalidRegularExpression):
            return compiled
        return tuple(sorted({name for name in topic_names if compiled.fullmatch(name) is not None}))

    def resolve_all(self, regexes: Iterable[str], topic_names: Iterable[str]) -> RegexResolution:
        """Every pattern resolved against the same topics; invalid ones resolve to () and are listed apart."""
        names = tuple(sorted(set(topic_names)))
        topics: dict[str, tuple[str, ...]] = {}
        invalid: list[InvalidRegularExpression] = []
        for regex in sorted(set(regexes)):
            resolved = self.resolve(regex, names)
            if isinstance(resolved, InvalidRegularExpression):
                invalid.append(resolved)
                resolved = ()
            topics[regex] = resolved
        return RegexResolution(topics, tuple(invalid))

    def _compiled(self, regex: str) -> _FullMatcher | InvalidRegularExpression:
        cached = self._cache.get(regex)
        if cached is not None:
            self._cache.move_to_end(regex)
            return cached
        compiled = _compile(regex)
        self._cache[regex] = compiled
        if len(self._cache) > self._max_cached:
            self._cache.popitem(last=False)
        return compiled


_DEFAULT_RESOLVER = TopicRegexResolver()


def validate_regex(regex: str) -> InvalidRegularExpression | None:
    """`TopicRegexResolver.validate` with a process-wide cache (compiled patterns are immutable, so sharing is safe)."""
    return _DEFAULT_RESOLVER.validate(regex)


def resolve_regex(regex: str, topic_names: Iterable[str]) -> tuple[str, ...] | InvalidRegularExpression:
    """`TopicRegexResolver.resolve` with the process-wide cache."""
    return _DEFAULT_RESOLVER.resolve(regex, topic_names)
