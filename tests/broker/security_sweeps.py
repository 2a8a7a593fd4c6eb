"""Sweep scenarios (tests/broker/test_metadata_admin.py runs each at every advertised version) for the security APIs a
PLAINTEXT listener serves: the SASL APIs answer ILLEGAL_SASL_STATE there, as Kafka's KafkaApis does, and the SCRAM
credential APIs answer Kafka's per-user errors."""

from __future__ import annotations

from protocol.errors import ErrorCode
from protocol.messages.alter_user_scram_credentials import AlterUserScramCredentialsRequest, ScramCredentialUpsertion
from protocol.messages.describe_user_scram_credentials import DescribeUserScramCredentialsRequest, UserName
from protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from protocol.messages.sasl_handshake import SaslHandshakeRequest
from protocol.registry import ApiKey
from tests.broker.cluster_sweeps import Scenario, Sweep
from tests.broker.wire import WireClient


async def sweep_sasl_handshake(s: Sweep, c: WireClient, v: int) -> None:
    response = await c.call(ApiKey.SASL_HANDSHAKE, v, SaslHandshakeRequest(mechanism="PLAIN"))
    assert (response.error_code, response.mechanisms) == (ErrorCode.ILLEGAL_SASL_STATE, [])


async def sweep_sasl_authenticate(s: Sweep, c: WireClient, v: int) -> None:
    response = await c.call(ApiKey.SASL_AUTHENTICATE, v, SaslAuthenticateRequest(auth_bytes=b"\0u\0p"))
    assert response.error_code == ErrorCode.ILLEGAL_SASL_STATE
    assert response.error_message == "SaslAuthenticate request received after successful authentication"


async def sweep_describe_user_scram_credentials(s: Sweep, c: WireClient, v: int) -> None:
    request = DescribeUserScramCredentialsRequest(users=[UserName(name="nobody")])
    [result] = (await c.call(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, v, request)).results
    assert (result.error_code, result.error_message) == (
        ErrorCode.RESOURCE_NOT_FOUND,
        "Attempt to describe a user credential that does not exist: nobody",
    )


async def sweep_alter_user_scram_credentials(s: Sweep, c: WireClient, v: int) -> None:
    upsert = ScramCredentialUpsertion(name="few", mechanism=2, iterations=100, salt=b"s", salted_password=b"p" * 64)
    request = AlterUserScramCredentialsRequest(upsertions=[upsert])
    [result] = (await c.call(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, v, request)).results
    assert (result.user, result.error_code, result.error_message) == (
        "few",
        ErrorCode.UNACCEPTABLE_CREDENTIAL,
        "Too few iterations",
    )


SECURITY_SWEEPS: dict[int, Scenario] = {
    ApiKey.SASL_HANDSHAKE: sweep_sasl_handshake,
    ApiKey.SASL_AUTHENTICATE: sweep_sasl_authenticate,
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: sweep_describe_user_scram_credentials,
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: sweep_alter_user_scram_credentials,
}
