"""How the CLI's Kafka client reaches a secured listener: Kafka tools' `--command-config` file, read the Kafka way.

The keys a Kafka client takes: `security.protocol` (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL), `sasl.mechanism`
(PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) with the user and password in `sasl.jaas.config` (`... required
username="alice" password="alice-secret";`), and for TLS a PEM truststore (`ssl.truststore.type=PEM`,
`ssl.truststore.location`) and, for mutual TLS, a PEM keystore file (`ssl.keystore.location`, key and chain).
A key the CLI cannot honour is an error naming it, never ignored.

The SASL exchange runs over the connection's own request function (`authenticate`): SaslHandshake v1, then
SaslAuthenticate with PLAIN's single message or SCRAM's two (RFC 5802, the server's signature checked).
"""

from __future__ import annotations

import base64
import contextlib
import hmac
import secrets
import ssl
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from broker.security.jaas import JaasConfigError, single_login_module
from broker.security.scram import MECHANISMS as SCRAM_MECHANISMS
from broker.security.scram import sasl_name
from cli.kafka_client import KafkaClientError
from protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from protocol.messages.sasl_handshake import SaslHandshakeRequest
from protocol.registry import ApiKey
from storage.files import read_properties

__all__ = ["ClientSecurity", "authenticate", "read_command_config", "sasl_tokens"]

_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
_KNOWN = {
    "security.protocol", "sasl.mechanism", "sasl.jaas.config", "ssl.truststore.type", "ssl.truststore.location",
    "ssl.keystore.type", "ssl.keystore.location", "ssl.endpoint.identification.algorithm",
}  # fmt: skip
Call = Callable[[ApiKey, Any], Any]


@dataclass(frozen=True, slots=True)
class ClientSecurity:
    protocol: str = "PLAINTEXT"
    mechanism: str | None = None
    username: str = ""
    password: str = ""
    context: ssl.SSLContext | None = None

    def login(self, call: Call) -> None:
        """Authenticate a new connection whose requests go through `call` (nothing to do without SASL)."""
        if self.mechanism is not None:
            authenticate(call, self)


def read_command_config(path: Path) -> ClientSecurity:
    """The security settings of a `--command-config` file; KafkaClientError naming the key for what cannot be used."""
    try:
        props = read_properties(path)
    except OSError as exc:
        raise KafkaClientError(f"cannot read --command-config {path}: {exc.strerror or exc}") from None
    unknown = sorted(set(props) - _KNOWN)
    if unknown:
        raise KafkaClientError(f"--command-config {path}: {', '.join(unknown)} not supported by group-broker's CLI")
    protocol = props.get("security.protocol", "PLAINTEXT").upper()
    if protocol not in _PROTOCOLS:
        raise KafkaClientError(f"invalid value {protocol!r} for 'security.protocol' (one of {', '.join(_PROTOCOLS)})")
    context = _tls(props) if protocol in ("SSL", "SASL_SSL") else None
    if not protocol.startswith("SASL_"):
        return ClientSecurity(protocol, context=context)
    mechanism = props.get("sasl.mechanism", "GSSAPI").upper()
    if mechanism != "PLAIN" and mechanism not in SCRAM_MECHANISMS:
        raise KafkaClientError(
            f"invalid value {mechanism!r} for 'sasl.mechanism': PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"
        )
    try:
        options = single_login_module(props.get("sasl.jaas.config", "")).options
    except JaasConfigError as exc:
        raise KafkaClientError(f"invalid value for 'sasl.jaas.config': {exc}") from None
    if not options.get("username") or not options.get("password"):
        raise KafkaClientError('\'sasl.jaas.config\' needs username="..." and password="..."')
    return ClientSecurity(protocol, mechanism, options["username"], options["password"], context)


def _tls(props: dict[str, str]) -> ssl.SSLContext:
    for key in ("ssl.truststore.type", "ssl.keystore.type"):
        if props.get(key, "PEM").upper() != "PEM":
            raise KafkaClientError(f"invalid value for '{key}': only PEM")
    try:
        context = ssl.create_default_context(cafile=props.get("ssl.truststore.location"))
        if props.get("ssl.endpoint.identification.algorithm", "https") == "":
            context.check_hostname = False
        if "ssl.keystore.location" in props:
            context.load_cert_chain(props["ssl.keystore.location"])
    except (OSError, ssl.SSLError) as exc:
        raise KafkaClientError(f"cannot use the TLS settings of --command-config: {exc}") from None
    return context


def authenticate(call: Call, security: ClientSecurity) -> None:
    """SaslHandshake then SaslAuthenticate with the configured mechanism; KafkaClientError with the broker's words."""
    assert security.mechanism is not None
    handshake = call(ApiKey.SASL_HANDSHAKE, SaslHandshakeRequest(mechanism=security.mechanism))
    if handshake.error_code:
        raise KafkaClientError(
            f"SASL mechanism {security.mechanism} is not enabled on this listener (enabled: "
            f"{', '.join(handshake.mechanisms) or 'none'})"
        )
    exchange = sasl_tokens(security)
    token = next(exchange)
    with contextlib.suppress(StopIteration):
        while True:
            answer = call(ApiKey.SASL_AUTHENTICATE, SaslAuthenticateRequest(auth_bytes=token))
            if answer.error_code:
                raise KafkaClientError(answer.error_message or f"SASL authentication failed ({answer.error_code})")
            token = exchange.send(bytes(answer.auth_bytes))


def sasl_tokens(security: ClientSecurity) -> Generator[bytes, bytes, None]:
    """The client's side of the exchange without IO, for any transport (the CLI's blocking one, the benchmark's
    asyncio one): yields each SaslAuthenticate token and is sent the broker's answer to it; returns once the
    broker's last answer checked out. PLAIN's single message, or SCRAM's two (RFC 5802, the server's signature
    checked: KafkaClientError otherwise)."""
    assert security.mechanism is not None
    if security.mechanism == "PLAIN":
        yield f"\0{security.username}\0{security.password}".encode()
        return
    mechanism = SCRAM_MECHANISMS[security.mechanism]
    nonce = secrets.token_urlsafe(24)
    first_bare = f"n={sasl_name(security.username)},r={nonce}"
    server_first = (yield f"n,,{first_bare}".encode()).decode()
    fields = dict(item.split("=", 1) for item in server_first.split(","))
    if not fields.get("r", "").startswith(nonce):
        raise KafkaClientError("SCRAM: the broker's nonce does not extend ours")
    salt, iterations = base64.b64decode(fields["s"]), int(fields["i"])
    salted = mechanism.salted_password(security.password, salt, iterations)
    credential = mechanism.credential_from_salted_password(salted, salt, iterations)
    without_proof = f"c=biws,r={fields['r']}"
    auth_message = f"{first_bare},{server_first},{without_proof}".encode()
    client_key = mechanism.client_key(salted)
    signature = mechanism.client_signature(credential.stored_key, auth_message)
    proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature, strict=True))).decode()
    server_final = (yield f"{without_proof},p={proof}".encode()).decode()
    expected = base64.b64encode(mechanism.server_signature(credential.server_key, auth_message)).decode()
    if not hmac.compare_digest(server_final, f"v={expected}"):
        raise KafkaClientError("SCRAM: the broker's signature is wrong")
