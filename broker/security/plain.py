"""SASL/PLAIN (RFC 4616) as Kafka's ``PlainSaslServer`` runs it: one message, ``authzid NUL authcid NUL passwd``.

Kafka's rules, with its messages (all sent to the client): more or fewer than three NUL-separated tokens (at most
four are counted), an empty user name, an empty password, a wrong password and an authorization id other than the
user name each fail the exchange. The password check is the caller's (``verify``), so that the same server serves
JAAS ``user_<name>`` entries (:mod:`broker.security.jaas`) or anything else.
"""

from __future__ import annotations

from collections.abc import Callable

from broker.security.sasl import SaslAuthenticationFailed, SaslIllegalState

__all__ = ["PLAIN", "PlainServer"]

PLAIN = "PLAIN"

#: Kafka reads at most this many tokens, so ``a\0b\0c\0d\0e`` is reported as 4 tokens, not 5.
_MAX_TOKENS = 4


def _tokens(message: str) -> list[str]:
    tokens: list[str] = []
    start = 0
    for _ in range(_MAX_TOKENS):
        end = message.find("\0", start)
        if end == -1:
            tokens.append(message[start:])
            break
        tokens.append(message[start:end])
        start = end + 1
    if len(tokens) != 3:
        raise SaslAuthenticationFailed(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(tokens)}")
    return tokens


class PlainServer:
    """One PLAIN exchange; ``verify(username, password)`` says whether the password is the user's."""

    mechanism = PLAIN

    def __init__(self, verify: Callable[[str, str], bool]) -> None:
        self._verify = verify
        self._authorization_id = ""
        self._complete = False

    @property
    def complete(self) -> bool:
        return self._complete

    @property
    def authorization_id(self) -> str:
        return self._authorization_id

    def evaluate(self, response: bytes) -> bytes:
        """Check the single PLAIN message; an empty challenge means success."""
        if self._complete:
            raise SaslIllegalState("Unexpected challenge in Sasl server state COMPLETE")
        authzid, username, password = _tokens(response.decode("utf-8", errors="replace"))
        if not username:
            raise SaslAuthenticationFailed("Authentication failed: username not specified")
        if not password:
            raise SaslAuthenticationFailed("Authentication failed: password not specified")
        if not self._verify(username, password):
            raise SaslAuthenticationFailed("Authentication failed: Invalid username or password")
        if authzid and authzid != username:
            raise SaslAuthenticationFailed(
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        self._authorization_id = username
        self._complete = True
        return b""
