"""The SASL state of one connection on a SASL listener, as Kafka's ``SaslServerAuthenticator`` keeps it, without IO.

The connection hands every decoded request to :meth:`SaslAuthenticator.on_request` and acts on the answer: ``None``
lets the dispatcher serve the request as usual, a :class:`Step` says what to send (a response body in the request's
own version, or a raw token) and whether to close the connection once it is sent. Kafka's rules kept here:

* before authentication only ApiVersions (once, before the handshake) and the SASL APIs are served; any other
  request before the handshake closes the connection without an answer (``IllegalSaslStateException``: "Unexpected
  Kafka request of type METADATA during SASL handshake."), one between SaslHandshake and SaslAuthenticate is first
  answered with its own error response carrying ILLEGAL_SASL_STATE (``getErrorResponse``);
* SaslHandshake v1 is followed by framed SaslAuthenticate requests; v0 by raw size-prefixed tokens (Kafka's support
  for clients older than KIP-152);
* an unknown mechanism is answered UNSUPPORTED_SASL_MECHANISM with the enabled ones, a failed exchange
  SASL_AUTHENTICATION_FAILED with Kafka's message (:func:`broker.security.sasl.client_message`); both then close;
* KIP-368: with ``connections.max.reauth.ms`` (per mechanism) or an OAUTHBEARER token's expiry, a SaslAuthenticate
  v1+ success carries the session lifetime; a SaslHandshake on the authenticated connection (at most one re-auth
  start per second) re-authenticates with the same mechanism and principal, and any other request after the session
  expired closes the connection.

After the exchange verified the client, the listener's ``gate`` (the broker's ``auth_gate``: the test toolkit's
authentication faults) may still refuse it: the client then gets exactly what a wrong password gives it
(SASL_AUTHENTICATION_FAILED with Kafka's message for the mechanism, then the connection closed).

One structured line per authentication success or failure (listener, mechanism, principal, peer).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog

from broker.responses import error_response
from broker.security.sasl import (
    SaslAuthenticationFailed,
    SaslFailure,
    SaslIllegalState,
    SaslInvalidCredentials,
    SaslServer,
    client_message,
)
from protocol.messages.sasl_authenticate import SaslAuthenticateRequest, SaslAuthenticateResponse
from protocol.messages.sasl_handshake import SaslHandshakeRequest, SaslHandshakeResponse
from protocol.registry import ApiKey

__all__ = ["MIN_REAUTH_INTERVAL_MS", "Gate", "SaslAuthenticator", "SaslSettings", "Step"]

log = structlog.get_logger("broker.security.authenticator")
#: Kafka's ``KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS``: a re-authentication starts at most once a second.
MIN_REAUTH_INTERVAL_MS = 1000
_UNSUPPORTED_SASL_MECHANISM, _ILLEGAL_SASL_STATE, _SASL_AUTHENTICATION_FAILED = 33, 34, 58
#: Asked once a client is verified, with (listener, client id, mechanism, username): a reason refuses it.
Gate = Callable[[str, str | None, str, str], str | None]


@dataclass(frozen=True, slots=True)
class SaslSettings:
    """One SASL listener: its enabled mechanisms (in the configured order), how to start an exchange of each, and
    ``connections.max.reauth.ms`` per mechanism (0: sessions never expire)."""

    listener: str
    mechanisms: tuple[str, ...]
    new_server: Callable[[str], SaslServer]
    max_reauth_ms: Mapping[str, int] = field(default_factory=dict)
    #: `sasl.server.max.receive.size`: the largest frame read before authentication.
    max_receive_bytes: int = 524288
    #: The wall clock an OAUTHBEARER token's expiry is read against.
    wall_ms: Callable[[], int] = field(default=lambda: int(time.time() * 1000))


@dataclass(frozen=True, slots=True)
class Step:
    """What the connection does: send ``response`` (a body in the request's API and version) or ``raw`` (a token,
    size-prefixed) if set, then close when ``close`` gives a reason."""

    response: Any = None
    raw: bytes | None = None
    close: str | None = None


class SaslAuthenticator:
    """One connection's SASL state; ``now_ms`` is the broker's monotonic clock (tests move it)."""

    def __init__(self, settings: SaslSettings, peer: str, now_ms: Callable[[], int], gate: Gate | None = None) -> None:
        self._settings = settings
        self._gate = gate
        self._client_id: str | None = None
        self._peer = peer
        self._now_ms = now_ms
        self._state = "HANDSHAKE_OR_VERSIONS_REQUEST"
        self._framed = True
        self._mechanism = ""
        self._server: SaslServer | None = None
        #: The authenticated principal (``User:<authorization id>``), set once the first exchange completes.
        self.principal: str | None = None
        self._expires_ms: int | None = None
        self._client_reauthenticates = False
        self._reauth_started_ms: int | None = None
        self._reauthenticating = False
        self._bad_mechanism = ""

    @property
    def authenticated(self) -> bool:
        return self._state == "COMPLETE"

    @property
    def expects_raw_token(self) -> bool:
        """After a SaslHandshake v0 the next frames are raw SASL tokens, not Kafka requests."""
        return self._state == "AUTHENTICATE" and not self._framed

    def on_request(self, api_key: int, api_version: int, body: Any, client_id: str | None = None) -> Step | None:
        """The authenticator's answer to a decoded request (``client_id`` from its header, for the gate), or None
        to let the dispatcher serve it."""
        self._client_id = client_id
        if self._state == "COMPLETE":
            if api_key == ApiKey.SASL_HANDSHAKE and self._may_reauthenticate():
                self._begin_reauthentication()
            elif self._expires_ms is not None and self._now_ms() > self._expires_ms:
                log.info("security.session_expired", listener=self._settings.listener, principal=self.principal)
                return Step(close="the SASL session expired (connections.max.reauth.ms)")
            else:
                return None
        if self._state == "REAUTH_BAD_MECHANISM":
            return self._failed(self._bad_mechanism, "")
        if self._state == "AUTHENTICATE":
            if api_key != ApiKey.SASL_AUTHENTICATE:
                reason = f"Unexpected Kafka request of type {_name(api_key)} during SASL authentication."
                return self._illegal(reason, _illegal_state_answer(api_key, api_version, body))
            return self._authenticate(api_version, body)
        if api_key == ApiKey.API_VERSIONS:
            if self._state != "HANDSHAKE_OR_VERSIONS_REQUEST":
                return self._illegal(f"Unexpected ApiVersions request received during SASL authentication state "
                                     f"{self._state}")  # fmt: skip
            self._state = "HANDSHAKE_REQUEST"
            return None
        if api_key != ApiKey.SASL_HANDSHAKE:
            return self._illegal(f"Unexpected Kafka request of type {_name(api_key)} during SASL handshake.")
        return self._handshake(api_version, body)

    def on_raw_token(self, token: bytes) -> Step:
        """A token of the unframed exchange that follows SaslHandshake v0; a failure closes without an answer."""
        assert self._server is not None
        try:
            challenge = self._server.evaluate(token)
            if self._server.complete:
                if self._reauthenticating:
                    return self._illegal("Re-authentication not supported for v0 SaslHandshake")
                self._complete()
        except SaslFailure as failure:
            return self._failed(str(failure), "")
        return Step(raw=challenge)

    # -- states -------------------------------------------------------------------------------------------------

    def _may_reauthenticate(self) -> bool:
        """Kafka's ``maybeBeginServerReauthentication``: only sessions that expire, once a second at most."""
        if self._expires_ms is None:
            return False
        now = self._now_ms()
        return self._reauth_started_ms is None or now - self._reauth_started_ms >= MIN_REAUTH_INTERVAL_MS

    def _begin_reauthentication(self) -> None:
        self._reauth_started_ms = self._now_ms()
        self._reauthenticating = True
        self._state = "HANDSHAKE_REQUEST"

    def _handshake(self, api_version: int, body: SaslHandshakeRequest) -> Step:
        self._framed = api_version >= 1
        enabled = list(self._settings.mechanisms)
        mechanism = body.mechanism
        if mechanism not in self._settings.mechanisms:
            response = SaslHandshakeResponse(error_code=_UNSUPPORTED_SASL_MECHANISM, mechanisms=enabled)
            self._log_failure(mechanism, f"Unsupported SASL mechanism {mechanism}")
            return Step(response=response, close=f"unsupported SASL mechanism {mechanism!r}")
        if self._reauthenticating and mechanism != self._mechanism:
            self._bad_mechanism = (
                f"SASL mechanism '{mechanism}' requested by client is not supported for re-authentication of "
                f"mechanism '{self._mechanism}'"
            )
            self._state = "REAUTH_BAD_MECHANISM"
        else:
            self._mechanism = mechanism
            self._server = self._settings.new_server(mechanism)
            self._state = "AUTHENTICATE"
        return Step(response=SaslHandshakeResponse(error_code=0, mechanisms=enabled))

    def _authenticate(self, api_version: int, body: SaslAuthenticateRequest) -> Step:
        assert self._server is not None
        self._client_reauthenticates = self._client_reauthenticates or api_version > 0
        try:
            challenge = self._server.evaluate(body.auth_bytes)
            lifetime_ms = self._complete() if self._server.complete else 0
        except SaslIllegalState as failure:
            return self._illegal(str(failure))
        except SaslFailure as failure:
            message = client_message(failure, self._mechanism, self._reauthenticating)
            if isinstance(failure, _Refused) and failure.client_message is not None:
                message = failure.client_message
            return self._failed(str(failure), message)
        return Step(
            response=SaslAuthenticateResponse(error_code=0, auth_bytes=challenge, session_lifetime_ms=lifetime_ms)
        )

    def _complete(self) -> int:
        """Finish an exchange: check the principal on re-authentication, start the session; its lifetime in ms."""
        assert self._server is not None
        self._refuse_if_gated()
        principal = f"User:{self._server.authorization_id}"
        if self._reauthenticating and principal != self.principal:
            old_type, _, old_name = str(self.principal).partition(":")
            new_type, _, new_name = principal.partition(":")
            raise _PrincipalChanged(
                f"Cannot change principals during re-authentication from {old_type}.{old_name}: {new_type}.{new_name}"
            )
        lifetime_ms = self._session_lifetime_ms()
        self._expires_ms = self._now_ms() + lifetime_ms if lifetime_ms or self._expiring() else None
        self.principal = principal
        self._state = "COMPLETE"
        log.info(
            "security.reauthenticated" if self._reauthenticating else "security.authenticated",
            listener=self._settings.listener,
            mechanism=self._mechanism,
            principal=principal,
            peer=self._peer,
            session_lifetime_ms=lifetime_ms or None,
        )
        self._reauthenticating = False
        return lifetime_ms

    def _refuse_if_gated(self) -> None:
        """The gate's refusal, raised as the failure a wrong password is for this mechanism (PLAIN tells the client
        "Invalid username or password", the others get Kafka's generic message); the reason goes to the log."""
        assert self._server is not None
        if self._gate is None:
            return
        user = self._server.authorization_id
        reason = self._gate(self._settings.listener, self._client_id, self._mechanism, user)
        if reason is None:
            return
        if self._mechanism == "PLAIN":
            raise _Refused(reason, "Authentication failed: Invalid username or password")
        raise _Refused(reason)

    def _expiring(self) -> bool:
        return self._settings.max_reauth_ms.get(self._mechanism, 0) > 0 or self._credential_expiry_ms() is not None

    def _credential_expiry_ms(self) -> int | None:
        """An OAUTHBEARER token's ``exp`` (Kafka's ``CREDENTIAL.LIFETIME.MS`` negotiated property)."""
        token = getattr(self._server, "token", None)
        return int(token.expiration_s * 1000) if token is not None else None

    def _session_lifetime_ms(self) -> int:
        """Kafka's ``calcCompletionTimesAndReturnSessionLifetimeMs``: the smaller of the configured maximum and the
        credential's remaining life; 0 when neither applies."""
        max_reauth = self._settings.max_reauth_ms.get(self._mechanism, 0)
        expiry = self._credential_expiry_ms()
        candidates = [max_reauth] if max_reauth > 0 else []
        if expiry is not None:
            candidates.append(expiry - self._settings.wall_ms())
        return max(0, min(candidates)) if candidates else 0

    def _illegal(self, reason: str, answer: Any = None) -> Step:
        """Kafka's ``IllegalSaslStateException``: the connection is closed, after ``answer`` when there is one."""
        self._state = "FAILED"
        log.warning("security.illegal_sasl_state", listener=self._settings.listener, peer=self._peer, reason=reason)
        return Step(response=answer, close=reason)

    def _failed(self, reason: str, message: str) -> Step:
        """A failed exchange: SASL_AUTHENTICATION_FAILED with ``message`` (framed only), then close."""
        self._state = "FAILED"
        self._log_failure(self._mechanism, reason)
        response = SaslAuthenticateResponse(error_code=_SASL_AUTHENTICATION_FAILED, error_message=message)
        return Step(response=response if self._framed and message else None, close="SASL authentication failed")

    def _log_failure(self, mechanism: str, reason: str) -> None:
        attempted = self._server.authorization_id if self._server is not None else ""
        log.warning(
            "security.reauthentication_failed" if self._reauthenticating else "security.authentication_failed",
            listener=self._settings.listener,
            mechanism=mechanism,
            principal=f"User:{attempted}" if attempted else self.principal,
            peer=self._peer,
            reason=reason,
        )


class _Refused(SaslInvalidCredentials):
    """The gate refused a verified client: logged with the gate's reason; the client sees Kafka's message for a
    wrong password (``client_message``'s generic one, or PLAIN's own)."""

    def __init__(self, reason: str, message: str | None = None) -> None:
        super().__init__(reason)
        self.client_message = message


class _PrincipalChanged(SaslAuthenticationFailed):
    """Kafka's ``ensurePrincipalUnchanged`` failure (a ``SaslAuthenticationException``: the client sees it)."""


def _illegal_state_answer(api_key: int, api_version: int, body: Any) -> Any:
    """What Kafka's ``handleSaslToken`` sends a request that is not SaslAuthenticate after the handshake: the request's
    own error response (``getErrorResponse``) with ILLEGAL_SASL_STATE, before closing; None for the few responses
    with no place for an error (the connection is then closed without an answer)."""
    try:
        return error_response(api_key, api_version, body, _ILLEGAL_SASL_STATE)
    except ValueError:
        return None


def _name(api_key: int) -> str:
    """The API's name as Kafka's ``ApiKeys`` enum spells it (METADATA)."""
    try:
        return ApiKey(api_key).name
    except ValueError:
        return str(api_key)
