"""SASL/OAUTHBEARER (RFC 7628) with Kafka's *unsecured* token validator, for development set-ups.

The server (Kafka's ``OAuthBearerSaslServer``) reads one client message, ``n,[a=<authzid>],\\x01auth=Bearer
<token>\\x01[<ext>=<value>\\x01...]\\x01``. A token the validator refuses is answered with an RFC 7628 JSON error
challenge (``{"status":"invalid_token"}``, or ``insufficient_scope`` with the required scope); the client then sends
a single ``\\x01`` and the exchange fails with that JSON as the message the client sees. A malformed message fails as
invalid credentials (the generic message); an authorization id other than the token's principal fails with Kafka's
message. Extensions are all accepted, as the unsecured validator accepts them.

The validator (Kafka's ``OAuthBearerUnsecuredValidatorCallbackHandler``) takes a JWS with ``"alg":"none"`` and an
empty signature, and checks, with the JAAS options ``unsecuredValidatorPrincipalClaimName`` (default ``sub``),
``unsecuredValidatorScopeClaimName`` (``scope``), ``unsecuredValidatorRequiredScope`` (space separated) and
``unsecuredValidatorAllowableClockSkewMs`` (0): a non-blank string principal claim, an ``exp`` claim the clock has
not reached, an optional ``iat`` not in the future, ``exp`` after ``iat``, and every required scope present. One
difference: a header without ``alg`` is an invalid token here, where Kafka's validator throws a NullPointerException.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from broker.security.sasl import SaslAuthenticationFailed, SaslIllegalState, SaslInvalidCredentials

__all__ = ["OAUTHBEARER", "InvalidToken", "OAuthBearerServer", "UnsecuredJws", "UnsecuredValidator"]

OAUTHBEARER = "OAUTHBEARER"

_SEP = "\x01"
_SASLNAME = r"(?:[\x01-\x2B\x2D-\x3C\x3E-\x7F]|=2C|=3D)+"
_KVPAIRS = r"(?:[A-Za-z]+=[\x21-\x7E \t\r\n]+\x01)*"
_MESSAGE = re.compile(rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,\x01(?P<kvpairs>{_KVPAIRS})\x01")
_THREE_PARTS = "Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values"
_AUTH = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_~+/.a-zA-Z0-9]+=*)")


class InvalidToken(Exception):
    """A token the validator refuses; ``str()`` is Kafka's failure description, ``scope`` set for a missing scope."""

    def __init__(self, description: str, scope: str | None = None) -> None:
        super().__init__(description)
        self.scope = scope


def _decode_part(part: str) -> dict[str, Any]:
    try:
        raw = base64.b64decode(part + "=" * (-len(part) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidToken("malformed Base64 URL encoded value") from exc
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidToken("malformed JSON") from exc
    if not isinstance(value, dict):
        raise InvalidToken("malformed JSON")
    return value


def _java_type(value: Any) -> str:
    names = {bool: "Boolean", int: "Integer", float: "Double", str: "String", list: "ArrayList", dict: "LinkedHashMap"}
    return names.get(type(value), type(value).__name__)


@dataclass(frozen=True, slots=True)
class UnsecuredJws:
    """A parsed unsecured JWS (Kafka's ``OAuthBearerUnsecuredJws``): its claims and what Kafka derives from them."""

    claims: dict[str, Any]
    principal_name: str
    scope: frozenset[str]
    expiration_s: float
    issued_at_s: float | None

    @classmethod
    def parse(cls, compact: str, principal_claim: str = "sub", scope_claim: str = "scope") -> UnsecuredJws:
        """Parse and check the shape; :class:`InvalidToken` with Kafka's description otherwise."""
        if ".." in compact:
            raise InvalidToken("Malformed compact serialization contains '..'")
        parts = compact.split(".")
        if len(parts) != 3:
            raise InvalidToken(_THREE_PARTS)
        header, claims = _decode_part(parts[0]), _decode_part(parts[1])
        if header.get("alg") is None:
            raise InvalidToken("JWS header must have an Algorithm value")
        if header["alg"] != "none":
            raise InvalidToken("Unsecured JWS must have 'none' for an algorithm")
        if parts[2]:
            raise InvalidToken("Unsecured JWS must not contain a digital signature")
        expiration = cls._number(claims, "exp")
        if expiration is None:
            raise InvalidToken("No expiration time in JWT")
        principal = claims.get(principal_claim)
        if principal is not None and not isinstance(principal, str):
            raise InvalidToken(f"The '{principal_claim}' claim was not of type String: {_java_type(principal)}")
        if not principal or not principal.strip():
            raise InvalidToken(f"No principal name in JWT claim: {principal_claim}")
        raw_scope = claims.get(scope_claim)
        if isinstance(raw_scope, str):
            scope = frozenset(raw_scope.split())
        elif isinstance(raw_scope, list):
            scope = frozenset(str(item) for item in raw_scope)
        else:
            scope = frozenset()
        return cls(claims, principal, scope, expiration, cls._number(claims, "iat"))

    @staticmethod
    def _number(claims: Mapping[str, Any], name: str) -> float | None:
        value = claims.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InvalidToken(f"The '{name}' claim was not of type Number: {_java_type(value)}")
        return float(value)


@dataclass(frozen=True, slots=True)
class UnsecuredValidator:
    """The unsecured validator's options (the listener's JAAS options) and its check."""

    principal_claim: str = "sub"
    scope_claim: str = "scope"
    required_scope: tuple[str, ...] = ()
    allowable_clock_skew_ms: int = 0

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> UnsecuredValidator:
        """The validator a ``OAuthBearerLoginModule`` entry's options describe (ValueError as Kafka refuses)."""
        skew_text = options.get("unsecuredValidatorAllowableClockSkewMs", "0").strip() or "0"
        skew = int(skew_text)
        if skew < 0:
            raise ValueError(f"Allowable clock skew millis must not be negative: {skew_text}")
        return cls(
            principal_claim=options.get("unsecuredValidatorPrincipalClaimName", "").strip() or "sub",
            scope_claim=options.get("unsecuredValidatorScopeClaimName", "").strip() or "scope",
            required_scope=tuple(options.get("unsecuredValidatorRequiredScope", "").split()),
            allowable_clock_skew_ms=skew,
        )

    def validate(self, token: str, now_ms: int) -> UnsecuredJws:
        """The token, if valid at ``now_ms``; :class:`InvalidToken` with Kafka's description otherwise."""
        jws = UnsecuredJws.parse(token, self.principal_claim, self.scope_claim)
        skew = self.allowable_clock_skew_ms
        if jws.issued_at_s is not None and 1000 * jws.issued_at_s > now_ms + skew:
            raise InvalidToken(
                f"The Issued At value ({jws.issued_at_s:f} seconds) was after the indicated time ({now_ms} ms) plus "
                f"allowable clock skew ({skew} ms)"
            )
        if now_ms - skew >= 1000 * jws.expiration_s:
            raise InvalidToken(
                f"The indicated time ({now_ms} ms) minus allowable clock skew ({skew} ms) was on or after the "
                f"Expiration Time value ({jws.expiration_s:f} seconds)"
            )
        if jws.issued_at_s is not None and jws.issued_at_s >= jws.expiration_s:
            raise InvalidToken(
                f"The Expiration Time time ({jws.expiration_s:f} seconds) was not after the Issued At time "
                f"({jws.issued_at_s:f} seconds)"
            )
        required = f"[{', '.join(self.required_scope)}]"
        for element in self.required_scope:
            if element not in jws.scope:
                raise InvalidToken(
                    f"The provided scope ([{', '.join(sorted(jws.scope))}]) was missing a required scope "
                    f"({element}).  All required scope elements: {required}",
                    scope=required,
                )
        return jws


def _parse_message(text: str) -> tuple[str, str, dict[str, str]]:
    """(authzid, token, extensions) of a client message; SaslInvalidCredentials with Kafka's reason otherwise."""
    match = _MESSAGE.fullmatch(text)
    if match is None:
        raise SaslInvalidCredentials("Invalid OAUTHBEARER client first message")
    pairs = dict(item.split("=", 1) for item in match["kvpairs"].split(_SEP) if item)
    auth = pairs.pop("auth", None)
    if auth is None:
        raise SaslInvalidCredentials("Invalid OAUTHBEARER client first message: 'auth' not specified")
    auth_match = _AUTH.fullmatch(auth)
    if auth_match is None:
        raise SaslInvalidCredentials("Invalid OAUTHBEARER client first message: invalid 'auth' format")
    if auth_match["scheme"].lower() != "bearer":
        raise SaslInvalidCredentials(f"Invalid scheme in OAUTHBEARER client first message: {auth_match['scheme']}")
    return match["authzid"] or "", auth_match["token"], pairs


class OAuthBearerServer:
    """One OAUTHBEARER exchange, validating with ``validator`` at ``now_ms()``."""

    mechanism = OAUTHBEARER

    def __init__(self, validator: UnsecuredValidator, now_ms: Callable[[], int]) -> None:
        self._validator = validator
        self._now_ms = now_ms
        self._error: str | None = None
        self._complete = False
        self._principal = ""
        self.extensions: dict[str, str] = {}
        #: The validated token (its ``exp`` bounds the session for ``connections.max.reauth.ms``, KIP-368).
        self.token: UnsecuredJws | None = None

    @property
    def complete(self) -> bool:
        return self._complete

    @property
    def authorization_id(self) -> str:
        return self._principal

    def evaluate(self, response: bytes) -> bytes:
        """The empty challenge on success, the JSON error challenge for a refused token."""
        if self._complete:
            raise SaslIllegalState("Unexpected challenge in Sasl server state COMPLETE")
        if response == _SEP.encode() and self._error is not None:
            raise SaslAuthenticationFailed(self._error)
        self._error = None
        authzid, token, extensions = _parse_message(response.decode("utf-8", errors="replace"))
        try:
            jws = self._validator.validate(token, self._now_ms())
        except InvalidToken as invalid:
            status = "insufficient_scope" if invalid.scope is not None else "invalid_token"
            scope = f', "scope":"{invalid.scope}"' if invalid.scope is not None else ""
            self._error = f'{{"status":"{status}"{scope}}}'
            return self._error.encode()
        if authzid and authzid != jws.principal_name:
            raise SaslAuthenticationFailed(
                f"Authentication failed: Client requested an authorization id ({authzid}) that is different from "
                f"the token's principal name ({jws.principal_name})"
            )
        self.token, self.extensions, self._principal = jws, extensions, jws.principal_name
        self._complete = True
        return b""
