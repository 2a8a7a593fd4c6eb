"""SASL/PLAIN with Kafka's PlainSaslServer rules and messages (all of them reach the client)."""

from __future__ import annotations

import pytest

from broker.security.plain import PlainServer
from broker.security.sasl import SaslAuthenticationFailed, SaslIllegalState, client_message

USERS = {"alice": "alice-secret"}


def _server() -> PlainServer:
    return PlainServer(lambda user, password: USERS.get(user) == password)


@pytest.mark.parametrize("message", [b"\0alice\0alice-secret", b"alice\0alice\0alice-secret"])
def test_the_right_password_authenticates_with_or_without_an_authorization_id(message: bytes) -> None:
    server = _server()
    assert server.evaluate(message) == b""
    assert server.complete
    assert server.authorization_id == "alice"


@pytest.mark.parametrize(
    ("message", "error"),
    [
        (b"alice\0alice-secret", "Invalid SASL/PLAIN response: expected 3 tokens, got 2"),
        (b"", "Invalid SASL/PLAIN response: expected 3 tokens, got 1"),
        (b"a\0b\0c\0d\0e", "Invalid SASL/PLAIN response: expected 3 tokens, got 4"),
        (b"\0\0alice-secret", "Authentication failed: username not specified"),
        (b"\0alice\0", "Authentication failed: password not specified"),
        (b"\0alice\0wrong", "Authentication failed: Invalid username or password"),
        (b"\0mallory\0alice-secret", "Authentication failed: Invalid username or password"),
        (
            b"bob\0alice\0alice-secret",
            "Authentication failed: Client requested an authorization id that is different from username",
        ),
    ],
)
def test_kafkas_failures_carry_kafkas_message_to_the_client(message: bytes, error: str) -> None:
    server = _server()
    with pytest.raises(SaslAuthenticationFailed) as failure:
        server.evaluate(message)
    assert client_message(failure.value, "PLAIN") == error
    assert not server.complete


def test_a_second_message_after_success_is_an_illegal_state() -> None:
    server = _server()
    server.evaluate(b"\0alice\0alice-secret")
    with pytest.raises(SaslIllegalState):
        server.evaluate(b"\0alice\0alice-secret")
