"""SCRAM server: the RFC 5802 / RFC 7677 test vectors, then Kafka's ScramSaslServer rules and failures."""

from __future__ import annotations

import base64

import pytest

from broker.security.sasl import (
    SaslAuthenticationFailed,
    SaslIllegalState,
    SaslInvalidCredentials,
    client_message,
)
from broker.security.scram import (
    SCRAM_SHA_256,
    SCRAM_SHA_512,
    ScramCredential,
    ScramMechanism,
    ScramServer,
    sasl_name,
    server_nonce,
    username_of,
)
from tests.security.scram_client import ScramClient

#: SCRAM-SHA-1 only to check the shared math against RFC 5802 section 5; Kafka serves SHA-256 and SHA-512.
SHA_1 = ScramMechanism("SCRAM-SHA-1", "sha1")

RFC_VECTORS = [
    pytest.param(
        SHA_1,
        "QSXCR+Q6sek8bf92",
        "fyko+d2lbbFgONRv9qkxdawL",
        "3rfcNHYJY1ZVvWVs7j",
        "v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=",
        "rmF9pqV8S7suAoZWja4dJRkFsKQ=",
        id="RFC 5802",
    ),
    pytest.param(
        SCRAM_SHA_256,
        "W22ZaJ0SNY7soEsUEjb6gQ==",
        "rOprNGfwEbeRWgbNEkqO",
        "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
        "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
        "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
        id="RFC 7677",
    ),
]


@pytest.mark.parametrize(("mechanism", "salt", "client_nonce", "nonce", "proof", "signature"), RFC_VECTORS)
def test_the_rfc_exchange_is_answered_byte_for_byte(
    mechanism: ScramMechanism, salt: str, client_nonce: str, nonce: str, proof: str, signature: str
) -> None:
    credential = mechanism.credential("pencil", base64.b64decode(salt), 4096)
    server = ScramServer(mechanism, {"user": credential}.get, nonce=lambda: nonce)
    first = server.evaluate(f"n,,n=user,r={client_nonce}".encode())
    assert first == f"r={client_nonce}{nonce},s={salt},i=4096".encode()
    final = server.evaluate(f"c=biws,r={client_nonce}{nonce},p={proof}".encode())
    assert final == f"v={signature}".encode()
    assert server.complete
    assert server.authorization_id == "user"


@pytest.mark.parametrize("mechanism", [SCRAM_SHA_256, SCRAM_SHA_512], ids=lambda m: m.name)
def test_a_client_with_the_password_authenticates_with_both_kafka_mechanisms(mechanism: ScramMechanism) -> None:
    credential = mechanism.credential("secret", b"salt-of-alice", 4096)
    server = ScramServer(mechanism, {"alice": credential}.get)
    client = ScramClient(mechanism, "alice", "secret")
    first = server.evaluate(client.first())
    final = server.evaluate(client.final(first))
    assert final.startswith(b"v=")
    assert server.complete
    assert server.authorization_id == "alice"


def _server(iterations: int = 4096, user: str = "alice") -> ScramServer:
    credential = SCRAM_SHA_256.credential("secret", b"salt", iterations)
    return ScramServer(SCRAM_SHA_256, {user: credential}.get, nonce=lambda: "servernonce")


def _fails_with(server: ScramServer, message: bytes, kind: type[Exception], reason: str) -> None:
    with pytest.raises(kind) as failure:
        server.evaluate(message)
    assert str(failure.value) == reason
    assert not server.complete


GENERIC = "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"


def test_an_unknown_user_fails_with_the_generic_message_for_the_client() -> None:
    server = _server()
    with pytest.raises(SaslInvalidCredentials) as failure:
        server.evaluate(b"n,,n=mallory,r=abc")
    assert str(failure.value) == "Authentication failed: Invalid user credentials"
    assert client_message(failure.value, "SCRAM-SHA-256") == GENERIC
    assert client_message(failure.value, "SCRAM-SHA-256", reauthenticating=True) == GENERIC.replace(
        "during authentication", "during re-authentication"
    )


def test_a_wrong_password_fails_on_the_final_message() -> None:
    server = _server()
    client = ScramClient(SCRAM_SHA_256, "alice", "secret")
    first = server.evaluate(client.first())
    _fails_with(server, client.final(first, password="wrong"), SaslInvalidCredentials, "Invalid client credentials")


def test_a_final_message_with_another_nonce_fails() -> None:
    server = _server()
    client = ScramClient(SCRAM_SHA_256, "alice", "secret")
    first = server.evaluate(client.first())
    _fails_with(
        server,
        client.final(first, nonce="clientnonceOTHER"),
        SaslInvalidCredentials,
        "Invalid client nonce in the final client message.",
    )


def test_a_credential_below_kafkas_minimum_iterations_is_refused() -> None:
    _fails_with(
        _server(iterations=4095),
        b"n,,n=alice,r=abc",
        SaslInvalidCredentials,
        "Iterations 4095 is less than the minimum 4096 for SCRAM-SHA-256",
    )


def test_an_authorization_id_other_than_the_user_fails_with_kafkas_message_for_the_client() -> None:
    server = _server()
    with pytest.raises(SaslAuthenticationFailed) as failure:
        server.evaluate(b"n,a=bob,n=alice,r=abc")
    assert client_message(failure.value, "SCRAM-SHA-256") == (
        "Authentication failed: Client requested an authorization id that is different from username"
    )


@pytest.mark.parametrize(
    "message",
    [b"", b"y,,n=alice,r=abc", b"p=tls-unique,,n=alice,r=abc", b"n,,n=alice", b"n,,n=al,ice,r=abc", b"\xff\xfe"],
)
def test_a_malformed_or_channel_bound_first_message_fails(message: bytes) -> None:
    server = _server()
    with pytest.raises(SaslInvalidCredentials):
        server.evaluate(message)


@pytest.mark.parametrize("message", [b"c=biws,r=abcservernonce", b"garbage", b"c=biws,r=abcservernonce,p=!!!!"])
def test_a_malformed_final_message_fails(message: bytes) -> None:
    server = _server()
    server.evaluate(b"n,,n=alice,r=abc")
    with pytest.raises(SaslInvalidCredentials) as failure:
        server.evaluate(message)
    assert str(failure.value) == "Authentication failed: Invalid client final message"


def test_a_proof_of_the_wrong_length_fails_verification() -> None:
    server = _server()
    server.evaluate(b"n,,n=alice,r=abc")
    _fails_with(server, b"c=biws,r=abcservernonce,p=AAAA", SaslInvalidCredentials, "Sasl client verification failed")


def test_extensions_are_accepted_and_a_token_authentication_is_not_served() -> None:
    server = _server()
    assert server.evaluate(b"n,,n=alice,r=abc,unknown=1").startswith(b"r=abcservernonce,")
    assert server.extensions == {"unknown": "1"}
    _fails_with(
        _server(),
        b"n,,n=alice,r=abc,tokenauth=true",
        SaslInvalidCredentials,
        "Authentication failed: Invalid user credentials",
    )


def test_any_message_after_the_end_is_an_illegal_state() -> None:
    server = _server()
    with pytest.raises(SaslInvalidCredentials):
        server.evaluate(b"n,,n=mallory,r=abc")
    with pytest.raises(SaslIllegalState):
        server.evaluate(b"n,,n=alice,r=abc")


def test_user_names_with_commas_and_equals_signs_round_trip_through_saslname() -> None:
    assert sasl_name("a=b,c") == "a=3Db=2Cc"
    assert username_of("a=3Db=2Cc") == "a=b,c"
    credential = SCRAM_SHA_512.credential("pw", b"s", 4096)
    server = ScramServer(SCRAM_SHA_512, {"a=b,c": credential}.get)
    client = ScramClient(SCRAM_SHA_512, "a=b,c", "pw")
    server.evaluate(client.final(server.evaluate(client.first())))
    assert server.authorization_id == "a=b,c"


def test_server_nonces_are_fresh_base36_strings() -> None:
    nonces = {server_nonce() for _ in range(20)}
    assert len(nonces) == 20
    assert all(n.isalnum() and n == n.lower() for n in nonces)


def test_credentials_from_a_salted_password_equal_those_from_the_password() -> None:
    salted = SCRAM_SHA_256.salted_password("secret", b"salt", 4096)
    assert SCRAM_SHA_256.credential_from_salted_password(salted, b"salt", 4096) == SCRAM_SHA_256.credential(
        "secret", b"salt", 4096
    )
    assert isinstance(SCRAM_SHA_256.credential("secret", b"salt", 4096), ScramCredential)


@pytest.mark.parametrize("mechanism", [SCRAM_SHA_256, SCRAM_SHA_512], ids=lambda m: m.name)
def test_aiokafkas_scram_client_authenticates_and_accepts_the_server_signature(mechanism: ScramMechanism) -> None:
    """A real client's SCRAM code (aiokafka's, driven without a socket) against the server, both directions checked."""
    from aiokafka.conn import ScramAuthenticator

    credential = mechanism.credential("s3cret", b"salt-of-a,b", 4096)
    server = ScramServer(mechanism, {"a,b": credential}.get)
    client = ScramAuthenticator(
        loop=None, sasl_plain_username="a,b", sasl_plain_password="s3cret", sasl_mechanism=mechanism.name
    )
    server_first = server.evaluate(client.first_message().encode())
    client.process_server_first_message(server_first.decode())
    server_final = server.evaluate(client.final_message().encode())
    client.process_server_final_message(server_final.decode())  # raises if our signature were wrong
    assert server.complete
    assert server.authorization_id == "a,b"
