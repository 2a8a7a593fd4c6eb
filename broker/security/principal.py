"""Who a connection is: Kafka's ``KafkaPrincipal`` and the ``ssl.principal.mapping.rules`` that name TLS clients.

Kafka's ``DefaultKafkaPrincipalBuilder`` gives ``User:ANONYMOUS`` to PLAINTEXT connections and to TLS clients
without a certificate, ``User:<authorization id>`` after SASL, and ``User:<mapped name>`` to a TLS client whose
certificate's distinguished name (RFC 2253 form, as Java's ``X500Principal.getName()`` writes it) went through the
mapping rules (:class:`SslPrincipalMapper`, Kafka's class of the same name).

Rules (comma separated, first match wins): ``DEFAULT`` keeps the DN; ``RULE:<regex>/<replacement>/[L|U]`` applies
when the regex matches the whole DN, the replacement uses Java's syntax (``$1`` a group, ``\\`` escapes), ``L``/``U``
lower- or upper-case the result. A DN no rule matches fails the connection ("No rules apply to ...").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ANONYMOUS", "KafkaPrincipal", "NoMatchingRule", "PrincipalMappingError", "SslPrincipalMapper", "user"]

USER_TYPE = "User"


@dataclass(frozen=True, slots=True)
class KafkaPrincipal:
    """A principal as ACLs name it: ``<type>:<name>``, almost always ``User:<name>``."""

    principal_type: str
    name: str

    def __str__(self) -> str:
        return f"{self.principal_type}:{self.name}"

    @classmethod
    def parse(cls, text: str) -> KafkaPrincipal:
        """``User:alice`` as Kafka's ``SecurityUtils.parseKafkaPrincipal`` reads it (split at the first colon)."""
        principal_type, sep, name = text.partition(":")
        if not text or not sep:
            raise ValueError(f"expected a string in format principalType:principalName but got {text}")
        return cls(principal_type, name)


def user(name: str) -> KafkaPrincipal:
    """``User:<name>``, the principal SASL and TLS authentication produce."""
    return KafkaPrincipal(USER_TYPE, name)


ANONYMOUS = user("ANONYMOUS")


class PrincipalMappingError(ValueError):
    """An ``ssl.principal.mapping.rules`` value Kafka refuses at startup; the message is Kafka's."""


class NoMatchingRule(LookupError):
    """A certificate DN that none of the rules maps (Kafka's ``NoMatchingRule``): the TLS connection fails."""


_RULE = r"(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_SPLITTER = re.compile(rf"\s*({_RULE})\s*(,\s*|$)")
_PARSER = re.compile(_RULE)


def _expand(replacement: str, match: re.Match[str]) -> str:
    """Java's ``Matcher.appendReplacement``: ``$n`` takes as many digits as name an existing group, ``\\x`` is x."""
    groups = match.re.groups
    out: list[str] = []
    i = 0
    while i < len(replacement):
        c = replacement[i]
        if c == "\\" and i + 1 < len(replacement):
            out.append(replacement[i + 1])
            i += 2
        elif c == "$" and i + 1 < len(replacement) and replacement[i + 1].isdigit():
            number, i = int(replacement[i + 1]), i + 2
            while i < len(replacement) and replacement[i].isdigit() and number * 10 + int(replacement[i]) <= groups:
                number, i = number * 10 + int(replacement[i]), i + 1
            if number > groups:
                raise IndexError(f"No group {number}")
            out.append(match.group(number) or "")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _escape_missing_groups(replacement: str, groups: int) -> str:
    """Kafka's ``escapeLiteralBackReferences``: a ``$n`` naming no group of the pattern is a literal ``$``."""
    if groups == 0:
        return replacement
    out = replacement
    for found in re.finditer(r"\$(\d+)", replacement):
        digits = found.group(1)
        if digits.startswith("0"):
            continue
        number = int(digits)
        while number > groups and number >= 10:
            number //= 10
        if number > groups:
            # Kafka indexes the already escaped text with positions found in the original; kept as it does.
            start = found.start(1)
            out = out[: start - 1] + "\\" + out[start - 1 :]
    return out


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str] | None
    replacement: str = ""
    case: str = ""

    def apply(self, dn: str) -> str | None:
        if self.pattern is None:
            return dn
        if self.pattern.fullmatch(dn) is None:
            return None
        replacement = _escape_missing_groups(self.replacement, self.pattern.groups)
        result = self.pattern.sub(lambda m: _expand(replacement, m), dn)
        return result.lower() if self.case == "L" else result.upper() if self.case == "U" else result

    def __str__(self) -> str:
        if self.pattern is None:
            return "DEFAULT"
        suffix = f"/{self.case}" if self.case else ""
        return f"RULE:{self.pattern.pattern}/{self.replacement}{suffix}"


def _parse_rule(text: str) -> _Rule | None:
    match = _PARSER.match(text)
    if match is None:
        raise PrincipalMappingError(f"Invalid rule: {text}")
    if match.end() != len(text):
        raise PrincipalMappingError(f"Invalid rule: `{text}`, unmatched substring: `{text[match.end() :]}`")
    if match.group(1) is not None:
        return _Rule(None)
    if match.group(2) is None:
        return None  # an empty rule, ignored as Kafka does
    try:
        pattern = re.compile(match.group(2))
    except re.error as exc:
        raise PrincipalMappingError(f"Invalid rule: {text}: {exc}") from exc
    return _Rule(pattern, match.group(4), match.group(6))


class SslPrincipalMapper:
    """The parsed ``ssl.principal.mapping.rules``; construction refuses what Kafka refuses."""

    def __init__(self, rules: str | None = "DEFAULT") -> None:
        texts = ["DEFAULT"] if rules is None else [m.group(1) for m in _SPLITTER.finditer(rules.strip())]
        self._rules = [rule for text in texts if (rule := _parse_rule(text)) is not None]

    def name(self, dn: str) -> str:
        """The principal name of a certificate's distinguished name; :class:`NoMatchingRule` if no rule applies."""
        for rule in self._rules:
            mapped = rule.apply(dn)
            if mapped is not None:
                return mapped
        raise NoMatchingRule(f"No rules apply to {dn}, rules [{', '.join(str(r) for r in self._rules)}]")

    def __str__(self) -> str:
        return f"SslPrincipalMapper(rules = [{', '.join(str(r) for r in self._rules)}])"
