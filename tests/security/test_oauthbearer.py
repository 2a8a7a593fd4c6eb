"""OAUTHBEARER with Kafka's unsecured JWS validator: the exchange, the JSON error challenge, every token check."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from broker.security.oauthbearer import InvalidToken, OAuthBearerServer, UnsecuredJws, UnsecuredValidator
from broker.security.sasl import SaslAuthenticationFailed, SaslIllegalState, SaslInvalidCredentials, client_message

NOW_MS = 1_700_000_000_000
NOW_S = NOW_MS // 1000


def _b64(value: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def token(claims: dict[str, Any] | None = None, header: dict[str, Any] | None = None, signature: str = "") -> str:
    default = {"sub": "alice", "exp": NOW_S + 3600, "iat": NOW_S - 10}
    return f"{_b64(header or {'alg': 'none'})}.{_b64(default if claims is None else claims)}.{signature}"


def message(jws: str, authzid: str = "", extensions: str = "") -> bytes:
    gs2 = f"n,a={authzid}," if authzid else "n,,"
    return f"{gs2}\x01auth=Bearer {jws}\x01{extensions}\x01".encode()


def _server(**options: str) -> OAuthBearerServer:
    return OAuthBearerServer(UnsecuredValidator.from_options(options), lambda: NOW_MS)


def test_a_valid_token_authenticates_its_subject_with_extensions() -> None:
    server = _server()
    assert server.evaluate(message(token(), extensions="traceId=abc\x01")) == b""
    assert server.complete
    assert server.authorization_id == "alice"
    assert server.extensions == {"traceId": "abc"}
    assert server.token is not None
    assert server.token.expiration_s == NOW_S + 3600


def test_a_refused_token_gets_the_json_challenge_then_fails_with_it() -> None:
    server = _server()
    challenge = server.evaluate(message(token({"sub": "alice", "exp": NOW_S - 1})))
    assert challenge == b'{"status":"invalid_token"}'
    with pytest.raises(SaslAuthenticationFailed) as failure:
        server.evaluate(b"\x01")
    assert client_message(failure.value, "OAUTHBEARER") == '{"status":"invalid_token"}'


def test_a_missing_scope_is_insufficient_scope_naming_the_required_scope() -> None:
    server = _server(unsecuredValidatorRequiredScope="read write")
    claims = {"sub": "alice", "exp": NOW_S + 60, "scope": "read"}
    assert server.evaluate(message(token(claims))) == b'{"status":"insufficient_scope", "scope":"[read, write]"}'


def test_an_authorization_id_other_than_the_principal_fails_with_kafkas_message() -> None:
    with pytest.raises(SaslAuthenticationFailed) as failure:
        _server().evaluate(message(token(), authzid="bob"))
    assert str(failure.value) == (
        "Authentication failed: Client requested an authorization id (bob) that is different from the token's "
        "principal name (alice)"
    )
    assert _server().evaluate(message(token(), authzid="alice")) == b""


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"garbage", "Invalid OAUTHBEARER client first message"),
        (b"n,,\x01\x01", "Invalid OAUTHBEARER client first message: 'auth' not specified"),
        (b"n,,\x01auth=Bearer\x01\x01", "Invalid OAUTHBEARER client first message: invalid 'auth' format"),
        (b"n,,\x01auth=Basic abc\x01\x01", "Invalid scheme in OAUTHBEARER client first message: Basic"),
    ],
)
def test_malformed_messages_fail_as_invalid_credentials(raw: bytes, reason: str) -> None:
    with pytest.raises(SaslInvalidCredentials) as failure:
        _server().evaluate(raw)
    assert str(failure.value) == reason


def test_the_scheme_is_case_insensitive_and_nothing_follows_success() -> None:
    server = _server()
    server.evaluate(message(token()).replace(b"Bearer", b"bEaReR"))
    with pytest.raises(SaslIllegalState):
        server.evaluate(b"\x01")


@pytest.mark.parametrize(
    ("jws", "reason"),
    [
        ("a..b", "Malformed compact serialization contains '..'"),
        ("a.b", "Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values"),
        (token() + "x.y", "Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values"),
        ("!!!." + _b64({}) + ".", "malformed Base64 URL encoded value"),
        (base64.urlsafe_b64encode(b"{nope").decode() + "." + _b64({}) + ".", "malformed JSON"),
        (token(header={"typ": "JWT"}), "JWS header must have an Algorithm value"),
        (token(header={"alg": "HS256"}), "Unsecured JWS must have 'none' for an algorithm"),
        (token(signature="c2ln"), "Unsecured JWS must not contain a digital signature"),
        (token({"sub": "alice"}), "No expiration time in JWT"),
        (token({"sub": "alice", "exp": "soon"}), "The 'exp' claim was not of type Number: String"),
        (token({"exp": NOW_S + 60}), "No principal name in JWT claim: sub"),
        (token({"sub": "  ", "exp": NOW_S + 60}), "No principal name in JWT claim: sub"),
        (token({"sub": 7, "exp": NOW_S + 60}), "The 'sub' claim was not of type String: Integer"),
        (
            token({"sub": "a", "exp": NOW_S}),
            f"The indicated time ({NOW_MS} ms) minus allowable clock skew (0 ms) was on or after the Expiration Time "
            f"value ({NOW_S:f} seconds)",
        ),
        (
            token({"sub": "a", "exp": NOW_S + 60, "iat": NOW_S + 1}),
            f"The Issued At value ({NOW_S + 1:f} seconds) was after the indicated time ({NOW_MS} ms) plus allowable "
            "clock skew (0 ms)",
        ),
        (
            token({"sub": "a", "exp": NOW_S - 100, "iat": NOW_S - 50}),
            f"The indicated time ({NOW_MS} ms) minus allowable clock skew (0 ms) was on or after the Expiration Time "
            f"value ({NOW_S - 100:f} seconds)",
        ),
    ],
)
def test_the_unsecured_validators_refusals(jws: str, reason: str) -> None:
    with pytest.raises(InvalidToken) as failure:
        UnsecuredValidator().validate(jws, NOW_MS)
    assert str(failure.value) == reason


def test_issued_at_must_precede_expiration() -> None:
    jws = token({"sub": "a", "exp": NOW_S + 10, "iat": NOW_S + 10})
    validator = UnsecuredValidator(allowable_clock_skew_ms=20_000)
    with pytest.raises(InvalidToken, match=r"^The Expiration Time time \(.*\) was not after the Issued At time"):
        validator.validate(jws, NOW_MS)


def test_clock_skew_tolerates_a_recently_expired_token() -> None:
    jws = token({"sub": "a", "exp": NOW_S - 5})
    assert UnsecuredValidator(allowable_clock_skew_ms=10_000).validate(jws, NOW_MS).principal_name == "a"


def test_options_choose_claims_and_scope() -> None:
    validator = UnsecuredValidator.from_options(
        {
            "unsecuredValidatorPrincipalClaimName": "client_id",
            "unsecuredValidatorScopeClaimName": "scp",
            "unsecuredValidatorRequiredScope": "kafka",
            "unsecuredValidatorAllowableClockSkewMs": "5",
        }
    )
    jws = validator.validate(token({"client_id": "svc", "exp": NOW_S + 5, "scp": ["kafka", "x"]}), NOW_MS)
    assert (jws.principal_name, jws.scope) == ("svc", frozenset({"kafka", "x"}))
    with pytest.raises(ValueError, match=r"^Allowable clock skew millis must not be negative: -1$"):
        UnsecuredValidator.from_options({"unsecuredValidatorAllowableClockSkewMs": "-1"})
    assert isinstance(UnsecuredJws.parse(token()), UnsecuredJws)


def test_aiokafkas_client_message_with_extensions_is_understood() -> None:
    """The initial response a real client builds (aiokafka's OAuthAuthenticator, no socket) authenticates."""
    from aiokafka.conn import OAuthAuthenticator

    class Provider:
        async def token(self) -> str:
            return token()

        def extensions(self) -> dict[str, str]:
            return {"logicalCluster": "lkc-1", "traceId": "t"}

    client = OAuthAuthenticator(sasl_oauth_token_provider=Provider())
    raw = client._build_oauth_client_request(token(), client._token_extensions())
    server = _server()
    assert server.evaluate(raw.encode()) == b""
    assert server.authorization_id == "alice"
    assert server.extensions == {"logicalCluster": "lkc-1", "traceId": "t"}
