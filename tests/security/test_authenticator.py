"""The connection's SASL state machine without sockets, with injected clocks: session lifetimes as Kafka computes
them (connections.max.reauth.ms, an OAUTHBEARER token's expiry, the smaller of the two, none), expiry closing the
next request, and nothing but ApiVersions and SASL served before authentication."""

from __future__ import annotations

import base64
import json
from functools import partial

from structlog.testing import capture_logs

from broker.security.authenticator import Gate, SaslAuthenticator, SaslSettings
from broker.security.oauthbearer import OAuthBearerServer, UnsecuredValidator
from broker.security.plain import PlainServer
from broker.security.sasl import SaslServer
from protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from protocol.messages.sasl_handshake import SaslHandshakeRequest
from protocol.registry import ApiKey

WALL_MS = 1_700_000_000_000


class Clock:
    def __init__(self) -> None:
        self.mono = 5_000
        self.wall = WALL_MS


def _b64(value: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def token_message(expires_in_s: int) -> bytes:
    token = f"{_b64({'alg': 'none'})}.{_b64({'sub': 'alice', 'exp': WALL_MS / 1000 + expires_in_s})}."
    return f"n,,\x01auth=Bearer {token}\x01\x01".encode()


def authenticator(clock: Clock, max_reauth_ms: int = 0, gate: Gate | None = None) -> SaslAuthenticator:
    servers: dict[str, partial[SaslServer]] = {
        "PLAIN": partial(PlainServer, lambda user, password: (user, password) == ("alice", "pw")),
        "OAUTHBEARER": partial(OAuthBearerServer, UnsecuredValidator(), lambda: clock.wall),
    }
    settings = SaslSettings(
        listener="SASL",
        mechanisms=("PLAIN", "OAUTHBEARER"),
        new_server=lambda mechanism: servers[mechanism](),
        max_reauth_ms={"PLAIN": max_reauth_ms, "OAUTHBEARER": max_reauth_ms},
        wall_ms=lambda: clock.wall,
    )
    return SaslAuthenticator(settings, "127.0.0.1:1", lambda: clock.mono, gate)


def login(auth: SaslAuthenticator, mechanism: str, message: bytes, version: int = 2) -> int:
    step = auth.on_request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism=mechanism))
    assert step is not None and step.response.error_code == 0
    step = auth.on_request(ApiKey.SASL_AUTHENTICATE, version, SaslAuthenticateRequest(auth_bytes=message))
    assert step is not None and step.close is None and step.response.error_code == 0
    assert auth.authenticated and auth.principal == "User:alice"
    return int(step.response.session_lifetime_ms)


def test_without_a_maximum_or_a_token_expiry_a_session_never_expires() -> None:
    clock = Clock()
    auth = authenticator(clock)
    assert login(auth, "PLAIN", b"\0alice\0pw") == 0
    clock.mono += 10**12
    assert auth.on_request(ApiKey.METADATA, 12, None) is None


def test_an_oauthbearer_tokens_expiry_bounds_the_session() -> None:
    clock = Clock()
    assert login(authenticator(clock), "OAUTHBEARER", token_message(expires_in_s=30)) == 30_000
    assert login(authenticator(clock, max_reauth_ms=10_000), "OAUTHBEARER", token_message(expires_in_s=30)) == 10_000


def test_the_session_ends_after_its_lifetime_on_the_monotonic_clock() -> None:
    clock = Clock()
    auth = authenticator(clock, max_reauth_ms=10_000)
    login(auth, "PLAIN", b"\0alice\0pw", version=0)  # a client that cannot re-authenticate expires too
    clock.wall += 10**9  # the wall clock moving says nothing about the session
    clock.mono += 10_000
    assert auth.on_request(ApiKey.METADATA, 12, None) is None
    clock.mono += 1
    step = auth.on_request(ApiKey.METADATA, 12, None)
    assert step is not None and step.response is None and step.close is not None


def test_only_api_versions_and_sasl_before_authentication() -> None:
    auth = authenticator(Clock())
    assert auth.on_request(ApiKey.API_VERSIONS, 3, None) is None  # the dispatcher answers it
    step = auth.on_request(ApiKey.FIND_COORDINATOR, 4, None)
    assert step is not None and step.response is None
    assert step.close == "Unexpected Kafka request of type FIND_COORDINATOR during SASL handshake."


class RecordingGate:
    """Refuses the first `refusals` verified clients, remembering what it was asked."""

    def __init__(self, refusals: int) -> None:
        self.refusals = refusals
        self.asked: list[tuple[str, str | None, str, str]] = []

    def __call__(self, listener: str, client_id: str | None, mechanism: str, username: str) -> str | None:
        self.asked.append((listener, client_id, mechanism, username))
        self.refusals -= 1
        return "injected" if self.refusals >= 0 else None


def authenticate(auth: SaslAuthenticator, mechanism: str, message: bytes) -> tuple[int, str | None, str | None]:
    """Handshake then one SaslAuthenticate v2 from client `app`: (error code, error message, close reason)."""
    auth.on_request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism=mechanism), "app")
    step = auth.on_request(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=message), "app")
    assert step is not None and step.response is not None
    return step.response.error_code, step.response.error_message, step.close


def test_a_gate_refusal_of_a_verified_plain_client_is_a_wrong_password_logged_once() -> None:
    gate = RecordingGate(refusals=1)
    with capture_logs() as logs:
        refused = authenticate(authenticator(Clock(), gate=gate), "PLAIN", b"\0alice\0pw")
    assert refused == (58, "Authentication failed: Invalid username or password", "SASL authentication failed")
    assert gate.asked == [("SASL", "app", "PLAIN", "alice")]
    [line] = [e for e in logs if e["log_level"] == "warning"]
    assert (line["event"], line["reason"], line["principal"]) == (
        "security.authentication_failed",
        "injected",
        "User:alice",
    )
    code, _, close = authenticate(authenticator(Clock(), gate=gate), "PLAIN", b"\0alice\0pw")
    assert (code, close) == (0, None)  # the rule is used up


def test_a_wrong_password_never_reaches_the_gate() -> None:
    gate = RecordingGate(refusals=1)
    code, _, close = authenticate(authenticator(Clock(), gate=gate), "PLAIN", b"\0alice\0wrong")
    assert (code, close, gate.asked) == (58, "SASL authentication failed", [])


def test_a_gate_refusal_of_other_mechanisms_gets_kafkas_generic_message() -> None:
    gate = RecordingGate(refusals=1)
    refused = authenticate(authenticator(Clock(), gate=gate), "OAUTHBEARER", token_message(expires_in_s=30))
    message = "Authentication failed during authentication due to invalid credentials with SASL mechanism OAUTHBEARER"
    assert refused == (58, message, "SASL authentication failed")
