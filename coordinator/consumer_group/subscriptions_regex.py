"""Regular-expression subscriptions of consumer-protocol members (KIP-848 `SubscribedTopicRegex`), as Kafka 4 does.

A member may subscribe by pattern instead of by topic list; the coordinator, not the client, turns the pattern into
topics, so that every member of a group sees the same topics and topics created later join the subscription. Kafka
compiles the pattern with RE2/J (com.google.re2j, not java.util.regex) and keeps the topics it matches as a whole
(`matcher(topic).matches()`). It filters the result by ACLs only: internal topics such as `__consumer_offsets` are
resolved like any other topic if the pattern matches them. A pattern that does not compile is refused with
INVALID_REGULAR_EXPRESSION when a member first brings it to the group; a null or empty pattern means "no pattern".

Patterns are compiled in RE2/J's dialect by `re2j_syntax` (C++ RE2 underneath, with the differences closed).

Sans-IO and pure apart from a bounded cache of compiled patterns, keyed by the pattern's text: a group's members
usually share one pattern, and every metadata change re-resolves it against all topics.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from coordinator.consumer_group.re2j_syntax import FullMatcher, compile_re2j, escape
from protocol.errors import ErrorCode

DEFAULT_MAX_CACHED = 256
"""Compiled patterns kept by a resolver. A pattern is per group (shared by its members), so this bounds memory by
the number of distinct patterns in use, not by members; RE2 programs are small for topic-name patterns."""


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


def is_regex_subscription(regex: str | None) -> bool:
    """Whether a member's SubscribedTopicRegex subscribes to anything: Kafka reads null and "" alike as no pattern
    (GroupMetadataManager.isNotEmpty); the Java consumer sends "" to drop its pattern."""
    return bool(regex)


class TopicRegexResolver:
    """Validates and resolves patterns, keeping the most recently used compiled patterns (and refusals)."""

    def __init__(self, max_cached: int = DEFAULT_MAX_CACHED) -> None:
        if max_cached < 1:
            raise ValueError(f"max_cached must be positive, got {max_cached}")
        self._max_cached = max_cached
        self._cache: OrderedDict[str, FullMatcher | InvalidRegularExpression] = OrderedDict()

    @staticmethod
    def literal(topic: str) -> str:
        """A pattern matching exactly `topic` (its metacharacters escaped)."""
        return escape(topic)

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

    def _compiled(self, regex: str) -> FullMatcher | InvalidRegularExpression:
        cached = self._cache.get(regex)
        if cached is not None:
            self._cache.move_to_end(regex)
            return cached
        outcome = compile_re2j(regex)
        compiled = InvalidRegularExpression(regex, outcome) if isinstance(outcome, str) else outcome
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
