"""Regular-expression subscriptions (KIP-848 `SubscribedTopicRegex`) resolved as Kafka 4 resolves them.

Kafka compiles the pattern with RE2/J (com.google.re2j) and keeps every topic of the metadata image that the
pattern matches as a whole (`matcher(topic).matches()`), internal topics included: the resolver
(TopicRegexResolver / GroupMetadataManager.refreshRegularExpressions) filters only by ACLs, never by name. A pattern
that does not compile is answered with INVALID_REGULAR_EXPRESSION (128) and the message of
`Utils.throwIfRegularExpressionIsInvalid`. The expected outcomes for invalid patterns below were checked against
re2j 1.8 (the jar Kafka 4.4 ships, in tests/reference/server/target/lib) with `Pattern.compile(p)` and
`PatternSyntaxException.getDescription()`.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coordinator.consumer_group.subscriptions_regex import (
    InvalidRegularExpression,
    TopicRegexResolver,
    is_regex_subscription,
    resolve_regex,
    validate_regex,
)
from protocol.errors import ErrorCode

TOPICS = ("foo", "bar", "baz", "qux", "__consumer_offsets", "__transaction_state", "orders-eu", "orders-us")


# ---------------------------------------------------------------------------------------------------------------
# Kafka's own examples (TopicRegexResolverTest, GroupMetadataManagerTest)


def test_kafka_basic_matching_example() -> None:
    """TopicRegexResolverTest.testBasicMatching: `ba.*` over foo, bar, baz, qux is exactly {bar, baz}."""
    assert resolve_regex("ba.*", ["foo", "bar", "baz", "qux"]) == ("bar", "baz")


def test_kafka_example_a_regex_matching_nothing_resolves_to_the_empty_set() -> None:
    """TopicRegexResolverTest.testInvalidRegexIgnored: `a.*` over foo, bar resolves, to nothing."""
    assert resolve_regex("a.*", ["foo", "bar"]) == ()


def test_several_regexes_resolve_independently_and_an_invalid_one_resolves_to_nothing() -> None:
    """resolveRegularExpressions answers every requested regex; one that does not compile (which validation should
    have refused earlier) resolves to the empty set instead of failing the others, and is reported."""
    resolution = TopicRegexResolver().resolve_all({"ba.*", "orders-.*", "(?=x)"}, TOPICS)
    assert resolution.topics == {"ba.*": ("bar", "baz"), "orders-.*": ("orders-eu", "orders-us"), "(?=x)": ()}
    assert [error.regex for error in resolution.invalid] == ["(?=x)"]


# ---------------------------------------------------------------------------------------------------------------
# Full-match semantics


@pytest.mark.parametrize(
    ("regex", "expected"),
    [
        (".*", tuple(sorted(TOPICS))),
        ("foo", ("foo",)),
        ("fo", ()),  # a prefix is not enough: the whole name must match
        ("oo", ()),  # nor is a substring (Python's re.search would say yes)
        ("a|ba.", ("bar", "baz")),  # alternation is anchored as a whole, not just its first branch
        ("orders-(eu|us)", ("orders-eu", "orders-us")),
        ("(?i)FOO", ("foo",)),
        ("^foo$", ("foo",)),  # explicit anchors are allowed and redundant
        ("\\Qorders-eu\\E", ("orders-eu",)),  # RE2's literal quoting
    ],
)
def test_a_pattern_must_match_the_whole_topic_name(regex: str, expected: tuple[str, ...]) -> None:
    assert resolve_regex(regex, TOPICS) == expected


def test_resolution_is_sorted_and_deterministic_whatever_the_order_of_the_topic_names() -> None:
    assert resolve_regex(".*s.*", reversed(TOPICS)) == resolve_regex(".*s.*", TOPICS)
    assert resolve_regex(".*s.*", TOPICS) == ("__consumer_offsets", "__transaction_state", "orders-eu", "orders-us")


def test_a_topic_listed_twice_is_resolved_once() -> None:
    assert resolve_regex("foo", ["foo", "foo"]) == ("foo",)


# ---------------------------------------------------------------------------------------------------------------
# Internal topics: Kafka's coordinator does not exclude them (only the client-side classic pattern path does)


def test_internal_topics_are_resolved_like_any_other_topic_as_kafka_does() -> None:
    assert resolve_regex("__.*", TOPICS) == ("__consumer_offsets", "__transaction_state")
    assert resolve_regex(".*", TOPICS) == tuple(sorted(TOPICS))


# ---------------------------------------------------------------------------------------------------------------
# The empty regex


def test_the_empty_regex_means_no_regex_subscription_as_kafka_reads_it() -> None:
    """GroupMetadataManager.isNotEmpty: a null or empty SubscribedTopicRegex is no regex subscription at all (the
    Java consumer sends "" to drop its pattern). It is valid syntax and matches no topic (no topic is named "")."""
    assert not is_regex_subscription(None)
    assert not is_regex_subscription("")
    assert is_regex_subscription("foo")
    assert validate_regex("") is None
    assert resolve_regex("", TOPICS) == ()


# ---------------------------------------------------------------------------------------------------------------
# Invalid patterns: RE2/J syntax, not Python's re nor java.util.regex


@pytest.mark.parametrize(
    ("regex", "description"),
    [
        ("(a)\\1", "invalid escape sequence"),  # backreferences: valid in Python's re and Java, not in RE2
        ("(?=a)", "invalid or unsupported Perl syntax"),  # lookahead
        ("(?!a)", "invalid or unsupported Perl syntax"),  # negative lookahead
        ("(?<=a)", "invalid named capture"),  # lookbehind: RE2/J reads "(?<" as a named group
        ("(?P=n)", "invalid or unsupported Perl syntax"),  # Python's named backreference
        ("(?x)a", "invalid or unsupported Perl syntax"),  # verbose flag: Python and Java have it, RE2 does not
        ("a++", "invalid nested repetition operator"),  # possessive quantifier (Java)
        ("a**", "invalid nested repetition operator"),
        ("x{2}{3}", "invalid nested repetition operator"),
        ("a{2,1}", "invalid repeat count"),
        ("a{1001}", "invalid repeat count"),  # RE2's repeat limit is 1000
        ("\\Z", "invalid escape sequence"),  # Python's end anchor; RE2 spells it \z
        ("\\C", "invalid escape sequence"),  # C++ RE2 accepts \C (any byte), RE2/J does not: Kafka refuses it
        ("[\\C]", "invalid escape sequence"),
        ("[", "missing closing ]"),
        ("(a", "missing closing )"),
        ("a)", "regexp/syntax: internal error"),  # re2j 1.8's own words for an unopened ")"
        ("*", "missing argument to repetition operator"),
        ("[z-a]", "invalid character class range"),
        ("\\", "trailing backslash at end of expression"),
        # Where C++ RE2 (the binding) accepts and RE2/J refuses: the module must refuse as Kafka does
        ("{+", "invalid nested repetition operator"),  # RE2/J counts a literal "{" as a repetition operator
        ("a{*", "invalid nested repetition operator"),
        ("{{2}", "invalid nested repetition operator"),
        ("{{1001}", "invalid repeat count"),  # RE2/J checks the count before the nesting
        ("a*{1001}", "invalid repeat count"),
        ("(?P<a>x)|(?<a>y)", "duplicate capture group name"),
        ("(?P<é>a)", "invalid named capture"),  # RE2/J group names are ASCII word characters only
        ("(?P<é>(?P=n)", "invalid named capture"),  # the first error from the left is the one reported
        ("\\C(?:", "invalid escape sequence"),
        ("\\x{", "invalid escape sequence"),
    ],
)
def test_patterns_re2j_refuses_are_invalid_regular_expression(regex: str, description: str) -> None:
    error = validate_regex(regex)
    assert error == InvalidRegularExpression(regex, description)
    assert error.error_code is ErrorCode.INVALID_REGULAR_EXPRESSION
    assert int(error.error_code) == 128
    assert error.message == f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {description}."
    assert resolve_regex(regex, TOPICS) == error


@pytest.mark.parametrize(
    "regex",
    # "\\é": RE2/J reads any escaped non-ASCII character as a literal, C++ RE2 refuses it
    [
        "\\é",
        "[a-\\é]",
        "{,}+",
        "{a}+",
        "\\{+",
        "[{+]",
        "\\Q{+\\E",
        "\\p{Greek}+",
        "\\z",
        "(?P<n>a)",
        "(?<n>a)",
        "(?U)a+",
        "(?s).",
        "\\pN+",
        "\\p{Greek}",
        "[[:alpha:]]+",
        "\\Q\\C\\E",
        "\\\\C",
    ],
)
def test_syntax_re2j_accepts_is_valid(regex: str) -> None:
    assert validate_regex(regex) is None


def test_a_pattern_that_cannot_be_encoded_is_invalid_not_a_crash() -> None:
    """A lone surrogate cannot reach RE2 (UTF-8 only); it is refused like any other bad pattern."""
    error = validate_regex("foo\ud800")
    assert isinstance(error, InvalidRegularExpression)
    assert error.description == "invalid UTF-8"


# ---------------------------------------------------------------------------------------------------------------
# The cache of compiled patterns


def test_the_cache_is_bounded_and_keeps_the_most_recently_used_patterns() -> None:
    resolver = TopicRegexResolver(max_cached=2)
    resolver.resolve("foo", TOPICS)
    resolver.resolve("bar", TOPICS)
    resolver.resolve("foo", TOPICS)  # foo is now the most recently used
    resolver.resolve("baz", TOPICS)  # evicts bar
    assert resolver.cached() == ("foo", "baz")


def test_invalid_patterns_are_cached_too_and_answer_the_same_error() -> None:
    resolver = TopicRegexResolver(max_cached=4)
    first = resolver.validate("(?=a)")
    assert resolver.cached() == ("(?=a)",)
    assert resolver.validate("(?=a)") == first


def test_the_cache_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_cached"):
        TopicRegexResolver(max_cached=0)


# ---------------------------------------------------------------------------------------------------------------
# Properties

# Kafka's legal topic names: [a-zA-Z0-9._-], at most 249 characters.
topic_names = st.text(alphabet=st.sampled_from("abcXYZ019._-"), min_size=1, max_size=40)


@given(name=topic_names, others=st.sets(topic_names, max_size=8))
def test_an_escaped_topic_name_resolves_to_exactly_itself_when_present(name: str, others: set[str]) -> None:
    literal = TopicRegexResolver.literal(name)
    assert validate_regex(literal) is None
    assert resolve_regex(literal, [*others, name]) == (name,)
    assert resolve_regex(literal, others - {name}) == ()


@given(names=st.lists(topic_names, max_size=12), regex=st.sampled_from([".*", "a.*", ".*-.*", "[abc]+", "X|Y"]))
def test_resolution_is_a_sorted_subset_of_the_topic_names(names: list[str], regex: str) -> None:
    resolved = resolve_regex(regex, names)
    assert isinstance(resolved, tuple)
    assert list(resolved) == sorted(set(resolved))
    assert set(resolved) <= set(names)
