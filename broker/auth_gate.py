"""The seam where a connection's authentication can be refused on demand: the test toolkit's authentication faults.

The broker never imports the toolkit (an import-linter contract), so it asks `Broker.auth_gate` (set before
`start()`; the default `OPEN_GATE` never refuses) at the two moments a client authenticates:

* `tls_handshake(listener, peer)`: an SSL listener asks before each TLS handshake (`broker/tls_server.py`); a reason
  closes the connection before the handshake completes, as a broker refusing the client would, with one
  `connection.tls_handshake_failed` line carrying the reason.
* `authentication(listener, client_id, mechanism, username)`: the SASL authenticator asks once a client's SASL
  exchange has been verified (SaslAuthenticate); a reason is answered as a failed authentication
  (SASL_AUTHENTICATION_FAILED with Kafka's message for the mechanism, then the connection closed), so clients see
  exactly what a wrong password gives them (`broker/security/authenticator.py`, through `Connection`).

A gate answers the reason (a sentence for the log) or None to let the client through.
"""

from __future__ import annotations

from typing import Protocol


class AuthGate(Protocol):
    def tls_handshake(self, listener: str, peer: str) -> str | None: ...

    def authentication(self, listener: str, client_id: str | None, mechanism: str, username: str) -> str | None: ...


class OpenGate:
    """The production gate: nobody is refused here (the TLS and SASL checks themselves still apply)."""

    def tls_handshake(self, listener: str, peer: str) -> str | None:
        return None

    def authentication(self, listener: str, client_id: str | None, mechanism: str, username: str) -> str | None:
        return None


OPEN_GATE = OpenGate()
