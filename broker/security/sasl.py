"""What every server-side SASL mechanism shares: its interface and the two ways an exchange fails.

Kafka's ``SaslServerAuthenticator`` treats failures in two ways, and clients show what it sends:

* a ``SaslAuthenticationException`` carries a message meant for the client (``Authentication failed: Invalid username
  or password``), sent as is in the SaslAuthenticate response;
* any other ``SaslException`` (an unknown SCRAM user, a wrong proof, a malformed message) stays in the broker's log;
  the client gets ``Authentication failed during authentication due to invalid credentials with SASL mechanism
  <mechanism>`` so that nothing tells an attacker which part was wrong.

Both end with SASL_AUTHENTICATION_FAILED and the connection closed. A response after the exchange finished is
Kafka's ``IllegalSaslStateException`` (ILLEGAL_SASL_STATE).
"""

from __future__ import annotations

from typing import Protocol

__all__ = [
    "SaslAuthenticationFailed",
    "SaslFailure",
    "SaslIllegalState",
    "SaslInvalidCredentials",
    "SaslServer",
    "client_message",
]


class SaslFailure(Exception):
    """An exchange that cannot succeed; ``str(failure)`` is what the broker logs."""


class SaslAuthenticationFailed(SaslFailure):
    """Kafka's ``SaslAuthenticationException``: the message itself goes to the client."""


class SaslInvalidCredentials(SaslFailure):
    """Kafka's plain ``SaslException``: logged, while the client gets the generic message of :func:`client_message`."""


class SaslIllegalState(SaslFailure):
    """A response the mechanism does not expect in its state (Kafka's ``IllegalSaslStateException``)."""


def client_message(failure: SaslFailure, mechanism: str, reauthenticating: bool = False) -> str:
    """The error message of the SaslAuthenticate response Kafka sends for ``failure``."""
    if isinstance(failure, SaslInvalidCredentials):
        stage = "re-authentication" if reauthenticating else "authentication"
        return f"Authentication failed during {stage} due to invalid credentials with SASL mechanism {mechanism}"
    return str(failure)


class SaslServer(Protocol):
    """One exchange of one mechanism on one connection (Java's ``SaslServer``, without IO).

    The wiring feeds each SaslAuthenticate ``auth_bytes`` to :meth:`evaluate` and sends back what it returns, until
    :attr:`complete`; then :attr:`authorization_id` names the principal (``User:<authorization_id>``).
    """

    @property
    def mechanism(self) -> str: ...

    @property
    def complete(self) -> bool: ...

    @property
    def authorization_id(self) -> str:
        """The authenticated user; only meaningful once :attr:`complete`."""
        ...

    def evaluate(self, response: bytes) -> bytes:
        """The challenge answering the client's ``response``; raises a :class:`SaslFailure`."""
        ...
