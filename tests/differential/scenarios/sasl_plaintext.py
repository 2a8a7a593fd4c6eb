"""The SASL APIs on a listener without SASL (the shared PLAINTEXT one), answered by both brokers at every version:
Kafka's KafkaApis answers SaslHandshake and SaslAuthenticate with ILLEGAL_SASL_STATE there, and the connection
stays open (a Metadata request after them is answered)."""

from __future__ import annotations

from protocol.messages.metadata import MetadataRequest
from protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from protocol.messages.sasl_handshake import SaslHandshakeRequest
from protocol.registry import ApiKey
from tests.differential.registry import scenario
from tests.differential.session import Session


@scenario("SaslHandshake v0-1 and SaslAuthenticate v0-2 without SASL")
async def sasl_apis_on_a_plaintext_listener(s: Session) -> None:
    """Each version of both SASL APIs, then Metadata on the same connection."""
    conn = await s.connect()
    for version in (0, 1):
        await conn.call(
            ApiKey.SASL_HANDSHAKE, version, SaslHandshakeRequest(mechanism="PLAIN"), f"handshake v{version}"
        )
    for version in (0, 1, 2):
        body = SaslAuthenticateRequest(auth_bytes=b"\0alice\0secret")
        await conn.call(ApiKey.SASL_AUTHENTICATE, version, body, f"authenticate v{version}")
    await conn.call(ApiKey.METADATA, 12, MetadataRequest(topics=[]), "still open: Metadata")
