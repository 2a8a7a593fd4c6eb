"""SASL listeners over the raw protocol, at every version: SaslHandshake v0-1 and SaslAuthenticate v0-2 with PLAIN
and SCRAM, Kafka's errors and messages (then the connection closed), nothing but ApiVersions and the SASL APIs
before authentication, the principal set, SCRAM users added live through AlterUserScramCredentials, and KIP-368:
session lifetime, re-authentication (same mechanism and principal) and an expired session closed on its next
request. The broker's clock is moved by the test, never waited for."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from broker.app import Broker
from broker.config import BrokerConfig
from broker.security.credential_store import FILE_NAME
from broker.security.scram import SCRAM_SHA_512
from protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    ScramCredentialDeletion,
    ScramCredentialUpsertion,
)
from protocol.messages.describe_user_scram_credentials import DescribeUserScramCredentialsRequest, UserName
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from protocol.messages.sasl_handshake import SaslHandshakeRequest
from protocol.registry import ApiKey
from tests.broker.conftest import broker_config
from tests.broker.wire import NAMED_API_VERSIONS, WireClient
from tests.security.scram_client import ScramClient

REAUTH_MS = 60_000
JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="bob-pw";'
SETTINGS = {
    "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
    "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
    "listener.name.sasl_plaintext.connections.max.reauth.ms": str(REAUTH_MS),
}
SCRAM_512 = 2


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    instance = Broker(BrokerConfig({**broker_config(tmp_path).explicit, **SETTINGS}))
    await instance.start()
    await instance.loaded.wait()
    instance.clock.freeze()  # sessions expire only as the tests move the clock
    yield instance
    await instance.stop()


async def sasl_client(broker: Broker) -> WireClient:
    return await WireClient.connect(broker.ports[1])


def plain(user: str, password: str) -> bytes:
    return f"\0{user}\0{password}".encode()


async def send_only(client: WireClient, api_key: int, version: int, body: object) -> None:
    _, frame = client.frame(api_key, version, body)
    client.writer.write(frame)
    await client.writer.drain()


async def login_plain(client: WireClient, user: str = "alice", password: str = "alice-secret", version: int = 2) -> int:
    """Handshake v1 then one SaslAuthenticate; the session lifetime the broker answered."""
    handshake = await client.call(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
    assert (handshake.error_code, handshake.mechanisms) == (0, ["PLAIN", "SCRAM-SHA-512"])
    answer = await client.call(
        ApiKey.SASL_AUTHENTICATE, version, SaslAuthenticateRequest(auth_bytes=plain(user, password))
    )
    assert (answer.error_code, answer.error_message, answer.auth_bytes) == (0, "", b"")  # Kafka's default
    return int(answer.session_lifetime_ms)


async def metadata_served(client: WireClient) -> bool:
    answer = await client.call(ApiKey.METADATA, 12, MetadataRequest(topics=None))
    return len(answer.brokers) == 1


@pytest.mark.parametrize("version", [0, 1, 2])
async def test_plain_authenticates_and_sets_the_principal(broker: Broker, version: int) -> None:
    client = await sasl_client(broker)
    await client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)
    with capture_logs() as logs:
        lifetime = await login_plain(client, version=version)
    assert lifetime == (REAUTH_MS if version >= 1 else 0)  # v0 has no session_lifetime_ms field
    assert await metadata_served(client)
    (connection,) = [c for c in broker.connections if c.session.listener == "SASL_PLAINTEXT"]
    assert connection.session.principal == "User:alice"
    [line] = [e for e in logs if e["event"] == "security.authenticated"]
    assert (line["listener"], line["mechanism"], line["principal"]) == ("SASL_PLAINTEXT", "PLAIN", "User:alice")
    assert line["peer"].startswith("127.0.0.1:")
    await client.close()


async def test_handshake_v0_is_followed_by_raw_tokens(broker: Broker) -> None:
    """Kafka's exchange for clients older than SaslAuthenticate: size-prefixed tokens, no Kafka header."""
    client = await sasl_client(broker)
    handshake = await client.call(ApiKey.SASL_HANDSHAKE, 0, SaslHandshakeRequest(mechanism="PLAIN"))
    assert handshake.error_code == 0
    token = plain("alice", "alice-secret")
    client.writer.write(len(token).to_bytes(4, "big") + token)
    assert await client.read_frame() == b""  # PLAIN's empty challenge, size-prefixed
    assert await metadata_served(client)
    await client.close()


async def test_a_raw_token_with_a_wrong_password_closes_without_an_answer(broker: Broker) -> None:
    client = await sasl_client(broker)
    await client.call(ApiKey.SASL_HANDSHAKE, 0, SaslHandshakeRequest(mechanism="PLAIN"))
    token = plain("alice", "wrong")
    client.writer.write(len(token).to_bytes(4, "big") + token)
    assert await client.closed_or_reset()


@pytest.mark.parametrize("version", [0, 1, 2])
async def test_a_wrong_password_fails_with_kafkas_message_then_closes(broker: Broker, version: int) -> None:
    client = await sasl_client(broker)
    await client.call(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
    with capture_logs() as logs:
        answer = await client.call(
            ApiKey.SASL_AUTHENTICATE, version, SaslAuthenticateRequest(auth_bytes=plain("alice", "x"))
        )
    assert (answer.error_code, answer.error_message) == (58, "Authentication failed: Invalid username or password")
    assert await client.closed_or_reset()
    [line] = [e for e in logs if e["event"] == "security.authentication_failed"]
    assert (line["mechanism"], line["reason"]) == ("PLAIN", "Authentication failed: Invalid username or password")


@pytest.mark.parametrize("version", [0, 1])
async def test_an_unsupported_mechanism_lists_the_enabled_ones_then_closes(broker: Broker, version: int) -> None:
    client = await sasl_client(broker)
    answer = await client.call(ApiKey.SASL_HANDSHAKE, version, SaslHandshakeRequest(mechanism="GSSAPI"))
    assert (answer.error_code, answer.mechanisms) == (33, ["PLAIN", "SCRAM-SHA-512"])
    assert await client.closed_or_reset()


async def test_a_request_before_the_handshake_closes_without_an_answer(broker: Broker) -> None:
    client = await sasl_client(broker)
    await send_only(client, ApiKey.METADATA, 12, MetadataRequest(topics=None))
    assert await client.closed_or_reset()


@pytest.mark.parametrize("version", [0, 4, 12, 13])
async def test_a_request_between_handshake_and_authenticate_gets_illegal_sasl_state_then_closes(
    broker: Broker, version: int
) -> None:
    """Kafka's handleSaslToken: the request's own error response (Metadata: per topic) with ILLEGAL_SASL_STATE."""
    client = await sasl_client(broker)
    await client.call(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
    answer = await client.call(ApiKey.METADATA, version, MetadataRequest(topics=[MetadataRequestTopic(name="t")]))
    assert [(t.name, t.error_code, t.partitions) for t in answer.topics] == [("t", 34, [])]
    assert (answer.brokers, answer.controller_id) == ([], -1)
    assert await client.closed_or_reset()


async def test_an_api_versions_between_handshake_and_authenticate_gets_illegal_sasl_state_then_closes(
    broker: Broker,
) -> None:
    client = await sasl_client(broker)
    await client.call(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
    answer = await client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)
    assert (answer.error_code, answer.api_keys) == (34, [])
    assert await client.closed_or_reset()


async def test_a_second_api_versions_before_authentication_closes(broker: Broker) -> None:
    client = await sasl_client(broker)
    await client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)
    await send_only(client, ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)
    assert await client.closed_or_reset()


@pytest.mark.parametrize(("handshake", "authenticate"), [(0, 0), (1, 1), (1, 2)])
async def test_sasl_apis_where_no_exchange_is_expected_answer_illegal_sasl_state(
    broker: Broker, handshake: int, authenticate: int
) -> None:
    client = await WireClient.connect(broker.ports[0])  # PLAINTEXT: Kafka's KafkaApis answers them
    shaken = await client.call(ApiKey.SASL_HANDSHAKE, handshake, SaslHandshakeRequest(mechanism="PLAIN"))
    assert (shaken.error_code, shaken.mechanisms) == (34, [])
    answer = await client.call(ApiKey.SASL_AUTHENTICATE, authenticate, SaslAuthenticateRequest(auth_bytes=b"x"))
    assert (answer.error_code, answer.error_message) == (
        34,
        "SaslAuthenticate request received after successful authentication",
    )
    assert await metadata_served(client)
    await client.close()


async def scram_user(broker: Broker, user: str, password: str) -> None:
    salt = os.urandom(16)
    upsert = ScramCredentialUpsertion(
        name=user, mechanism=SCRAM_512, iterations=4096, salt=salt,
        salted_password=SCRAM_SHA_512.salted_password(password, salt, 4096),
    )  # fmt: skip
    admin = await WireClient.connect(broker.ports[0])
    answer = await admin.call(
        ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, AlterUserScramCredentialsRequest(upsertions=[upsert])
    )
    assert [(r.user, r.error_code, r.error_message) for r in answer.results] == [(user, 0, None)]
    await admin.close()


async def scram_login(client: WireClient, user: str, password: str, real_password: str | None = None) -> object:
    await client.call(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="SCRAM-SHA-512"))
    scram = ScramClient(SCRAM_SHA_512, user, password)
    first = await client.call(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=scram.first()))
    assert first.error_code == 0 and first.session_lifetime_ms == 0
    return await client.call(
        ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=scram.final(first.auth_bytes))
    )


async def test_a_scram_user_added_over_the_wire_logs_in_at_once(broker: Broker) -> None:
    await scram_user(broker, "carol", "carol-secret")
    client = await sasl_client(broker)
    final = await scram_login(client, "carol", "carol-secret")
    assert final.error_code == 0 and final.auth_bytes.startswith(b"v=")
    assert final.session_lifetime_ms == REAUTH_MS
    assert await metadata_served(client)
    await client.close()


async def test_a_wrong_scram_password_gets_the_generic_message(broker: Broker) -> None:
    await scram_user(broker, "carol", "carol-secret")
    client = await sasl_client(broker)
    final = await scram_login(client, "carol", "wrong")
    assert (final.error_code, final.error_message) == (
        58,
        "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512",
    )
    assert await client.closed_or_reset()


async def test_scram_credentials_are_described_and_deleted_and_survive_a_restart(tmp_path: Path) -> None:
    config = BrokerConfig({**broker_config(tmp_path).explicit, **SETTINGS})
    instance = Broker(config)
    await instance.start()
    await scram_user(instance, "carol", "carol-secret")
    await instance.stop()
    instance = Broker(config)
    await instance.start()
    try:
        admin = await WireClient.connect(instance.ports[0])
        described = await admin.call(
            ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, DescribeUserScramCredentialsRequest(users=None)
        )
        assert [(r.user, [(c.mechanism, c.iterations) for c in r.credential_infos]) for r in described.results] == [
            ("carol", [(SCRAM_512, 4096)])
        ]
        deletion = ScramCredentialDeletion(name="carol", mechanism=SCRAM_512)
        deleted = await admin.call(
            ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, AlterUserScramCredentialsRequest(deletions=[deletion])
        )
        assert [(r.user, r.error_code) for r in deleted.results] == [("carol", 0)]
        missing = await admin.call(
            ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
            0,
            DescribeUserScramCredentialsRequest(users=[UserName(name="carol")]),
        )
        assert [(r.user, r.error_code, r.error_message) for r in missing.results] == [
            ("carol", 91, "Attempt to describe a user credential that does not exist: carol")
        ]
        await admin.close()
    finally:
        await instance.stop()


async def test_reauthentication_keeps_the_connection_and_starts_a_new_session(broker: Broker) -> None:
    client = await sasl_client(broker)
    await login_plain(client)
    broker.clock.advance(1000)  # Kafka starts a re-authentication at most once a second
    with capture_logs() as logs:
        assert await login_plain(client) == REAUTH_MS
    assert [e["principal"] for e in logs if e["event"] == "security.reauthenticated"] == ["User:alice"]
    broker.clock.advance(REAUTH_MS - 1)  # past the first session's end, within the second's
    assert await metadata_served(client)
    await client.close()


async def test_reauthentication_as_another_principal_fails_and_closes(broker: Broker) -> None:
    client = await sasl_client(broker)
    await login_plain(client)
    await client.call(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
    answer = await client.call(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=plain("bob", "bob-pw")))
    assert (answer.error_code, answer.error_message) == (
        58,
        "Cannot change principals during re-authentication from User.alice: User.bob",
    )
    assert await client.closed_or_reset()


async def test_reauthentication_with_another_mechanism_closes(broker: Broker) -> None:
    client = await sasl_client(broker)
    await login_plain(client)
    shaken = await client.call(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="SCRAM-SHA-512"))
    assert shaken.error_code == 0  # Kafka answers the handshake, then refuses the exchange
    await send_only(client, ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=b"n,,n=alice,r=x"))
    assert await client.closed_or_reset()


async def test_a_second_reauthentication_within_a_second_is_answered_illegal_sasl_state(broker: Broker) -> None:
    client = await sasl_client(broker)
    await login_plain(client)
    await login_plain(client)  # at once after authenticating: the first re-authentication is allowed
    shaken = await client.call(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
    assert shaken.error_code == 34
    assert await metadata_served(client)
    await client.close()


@pytest.mark.parametrize("version", [0, 2])
async def test_an_expired_session_is_closed_on_its_next_request(broker: Broker, version: int) -> None:
    """A client that cannot re-authenticate (SaslAuthenticate v0) is closed at expiry too, as Kafka does."""
    client = await sasl_client(broker)
    await login_plain(client, version=version)
    broker.clock.advance(REAUTH_MS)
    assert await metadata_served(client)  # at the last millisecond of the session
    broker.clock.advance(1)
    with capture_logs() as logs:
        await send_only(client, ApiKey.METADATA, 12, MetadataRequest(topics=None))
        assert await client.closed_or_reset()
    assert [e["principal"] for e in logs if e["event"] == "security.session_expired"] == ["User:alice"]


async def test_bytes_that_are_not_a_request_before_authentication_close_the_connection(broker: Broker) -> None:
    client = await sasl_client(broker)
    client.writer.write(b"\x00\x00\x00\x04\x60\x01\x02\x03")  # a GSSAPI token of a 0.9 client: not served
    assert await client.closed_or_reset()


async def test_a_failed_login_touches_no_other_connection(broker: Broker) -> None:
    good, bad = await sasl_client(broker), await sasl_client(broker)
    await login_plain(good)
    await bad.call(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
    answer = await bad.call(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=b"garbage"))
    assert (answer.error_code, answer.error_message) == (58, "Invalid SASL/PLAIN response: expected 3 tokens, got 1")
    assert await bad.closed_or_reset()
    assert await asyncio.wait_for(metadata_served(good), 5)
    await good.close()


def exist(*paths: Path) -> list[bool]:
    return [path.exists() for path in paths]


async def test_a_damaged_credentials_file_is_quarantined_and_reported_and_its_users_refused(tmp_path: Path) -> None:
    """Decision 9: the damaged file is moved aside (never deleted), reported in the storage status, and the broker
    starts with no SCRAM users rather than trusting it."""
    config = BrokerConfig({**broker_config(tmp_path).explicit, **SETTINGS})
    instance = Broker(config)
    await instance.start()
    await scram_user(instance, "carol", "carol-secret")
    await instance.stop()
    credentials = config.log_dir / FILE_NAME
    damaged = credentials.read_bytes().replace(b'"iterations": 4096', b'"iterations": 4097')
    assert damaged != credentials.read_bytes()
    credentials.write_bytes(damaged)
    instance = Broker(config)
    await instance.start()
    try:
        [moved] = [q for q in instance.logs.quarantined_files() if q.original == FILE_NAME]
        assert "CRC32 mismatch" in moved.reason
        assert exist(Path(moved.moved_to), credentials) == [True, False]
        client = await sasl_client(instance)
        await client.call(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="SCRAM-SHA-512"))
        first = await client.call(
            ApiKey.SASL_AUTHENTICATE,
            2,
            SaslAuthenticateRequest(auth_bytes=ScramClient(SCRAM_SHA_512, "carol", "x").first()),
        )
        assert first.error_code == 58
        assert await client.closed_or_reset()
    finally:
        await instance.stop()


async def test_a_frame_larger_than_sasl_server_max_receive_size_before_authentication_closes(broker: Broker) -> None:
    """Kafka reads at most `sasl.server.max.receive.size` (512 KiB) from a client it has not authenticated."""
    client = await sasl_client(broker)
    with capture_logs() as logs:
        client.writer.write((524288 + 1).to_bytes(4, "big"))
        assert await client.closed_or_reset()
    [line] = [e for e in logs if e["event"] == "connection.closed_on_bad_request"]
    assert line["reason"] == "frame of 524289 bytes exceeds sasl.server.max.receive.size=524288"


async def test_after_authentication_socket_request_max_bytes_applies_again(broker: Broker) -> None:
    client = await sasl_client(broker)
    await login_plain(client)
    (connection,) = [c for c in broker.connections if c.session.listener == "SASL_PLAINTEXT"]
    assert connection._frames.max_frame_bytes == broker.config["socket.request.max.bytes"]
    await client.close()


def unsecured_token(claims: dict[str, object]) -> str:
    def part(value: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part({'alg': 'none'})}.{part(claims)}."


async def test_oauthbearer_with_kafkas_unsecured_validator(tmp_path: Path) -> None:
    """A token the validator accepts logs in as its `sub`; a token without the required scope gets RFC 7628's JSON
    challenge (the scope as Java prints its list), and the client's closing \\x01 then fails with that JSON as the
    message, as Kafka answers."""
    module = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
    jaas = f'{module} required unsecuredValidatorRequiredScope="kafka";'
    settings = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "OAUTHBEARER",
        "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config": jaas,
    }
    instance = Broker(BrokerConfig({**broker_config(tmp_path).explicit, **settings}))
    await instance.start()
    exp = time.time() + 3600
    try:
        for scope, expected in (("kafka", None), ("other", '{"status":"insufficient_scope", "scope":"[kafka]"}')):
            client = await sasl_client(instance)
            await client.call(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="OAUTHBEARER"))
            token = unsecured_token({"sub": "svc", "exp": exp, "scope": scope})
            message = f"n,,\x01auth=Bearer {token}\x01\x01".encode()
            answer = await client.call(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=message))
            if expected is None:
                assert (answer.error_code, answer.auth_bytes) == (0, b"")
                (connection,) = [c for c in instance.connections if c.session.listener == "SASL_PLAINTEXT"]
                assert connection.session.principal == "User:svc"
                await client.close()
                continue
            assert (answer.error_code, answer.auth_bytes) == (0, expected.encode())
            final = await client.call(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=b"\x01"))
            assert (final.error_code, final.error_message) == (58, expected)
            assert await client.closed_or_reset()
    finally:
        await instance.stop()
