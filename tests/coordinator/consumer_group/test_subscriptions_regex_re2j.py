"""Differential: every pattern of a seeded corpus gets the same verdict here as from RE2/J, the engine Kafka uses.

The corpus strings together the syntax where engines disagree (Python's re, java.util.regex, C++ RE2 and RE2/J):
backreferences, lookaround, possessive and nested repetition, literal braces, named groups, escapes of non-ASCII
characters, `\\C`, `\\Q...\\E`, POSIX and Unicode classes. For each pattern the verdict compared is: whether it
compiles, RE2/J's description of the error (which Kafka quotes in INVALID_REGULAR_EXPRESSION), and otherwise the
topics it matches as a whole. RE2/J runs from the jar the pinned Kafka ships (tests/reference/server/target/lib).
"""

from __future__ import annotations

import random

import pytest

from coordinator.consumer_group.subscriptions_regex import InvalidRegularExpression, TopicRegexResolver
from tests.reference.re2j_check import ask_re2j, unavailable_reason

TOKENS = (
    *("a", "b", "-", ".", "_", "0", "é", "{", "}", "x{", "|", "^", "$", "(", ")", "[", "]", "[^", "[a-"),
    *("*", "+", "?", "??", "*?", "{2}", "{1,}", "{,2}", "{2,1}", "{1001}", "{1,2"),
    *("(?:", "(?i)", "(?s)", "(?m)", "(?U)", "(?x)", "(?-i)", "(?i:", "(?i-s)", "(?--)", "(?)", "(?#c)"),
    *("(?=", "(?!", "(?<=", "(?>", "(?|", "(?<", "(?P<n>", "(?<n>", "(?P<m>", "(?<m>", "(?P<é>", "(?P=n)", "(?'n'"),
    *("\\", "\\d", "\\D", "\\w", "\\s", "\\S", "\\b", "\\B", "\\A", "\\z", "\\Z", "\\G", "\\C", "\\Q", "\\E"),
    *("\\1", "\\0", "\\01", "\\8", "\\x41", "\\x{41}", "\\x{", "\\x{110000}", "\\N{U+41}", "\\cA", "\\u0041"),
    *("\\pN", "\\PL", "\\p{Greek}", "\\p{Foo}", "\\p{^Greek}", "\\pZ", "[[:alpha:]]", "[[:foo:]]", "[:alpha:]"),
    *("\\a", "\\f", "\\v", "\\t", "\\n", "\\e", "\\h", "\\K", "\\R", "\\X", "\\.", "\\-", "\\@", "\\<", "\\é"),
    *("[\\d-z]", "[a-\\d]", "[\\]]", "[]a]", "[^]a]", "[\\Q]\\E]", "[\\é]", "\\Q\\E"),
)
TOPICS = ("a", "b", "ab", "aa", "a-b", "a.b", "a_b", "0", "a0", "A", "B", "ba", "__consumer_offsets", "orders-eu")


def corpus(seed: int, size: int) -> list[str]:
    rng = random.Random(seed)
    generated = {"".join(rng.choice(TOKENS) for _ in range(rng.randint(1, 6))) for _ in range(size)}
    return sorted(generated | set(TOKENS))


@pytest.fixture(scope="module")
def re2j_available() -> None:
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)


@pytest.mark.usefixtures("re2j_available")
@pytest.mark.parametrize("seed", [14, 848])
def test_validity_error_description_and_matches_agree_with_re2j(seed: int) -> None:
    patterns = corpus(seed, 4000)
    resolver = TopicRegexResolver(max_cached=len(patterns))
    disagreements = []
    for pattern, kafka in zip(patterns, ask_re2j(patterns, TOPICS), strict=True):
        ours = resolver.resolve(pattern, TOPICS)
        ours_verdict = ours.description if isinstance(ours, InvalidRegularExpression) else None
        ours_matches = () if isinstance(ours, InvalidRegularExpression) else ours
        if (ours_verdict, ours_matches) != (kafka.error, tuple(sorted(kafka.matches))):
            disagreements.append((pattern, ours_verdict, ours_matches, kafka))
    assert disagreements == []
    assert len(patterns) > 3000  # the corpus is not degenerate
