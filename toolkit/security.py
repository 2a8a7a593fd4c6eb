"""What a test asks for when its broker should run secured, and the client settings that go with it.

`Security` is the request (`"PLAINTEXT"`, `"SSL"`, `"mTLS"` or a `Security(...)` for the details); `secure` turns
it into the broker's Kafka settings (certificates made by `toolkit.certs` in a directory the caller owns) and a
`ClientSettings`, which hands each client family its own spelling of the same settings: kafka-python and aiokafka
keyword arguments (with an `ssl.SSLContext`), a confluent-kafka (librdkafka) config dict, and a kafkajs-style dict
(PEM text, JSON-ready for a Node process). Tests use these settings rather than writing them, so what they prove is
what a user's clients run with.

SASL plugs in here: `SASL_PLAINTEXT` and `SASL_SSL` are recognised and refused with a clear message until the
broker serves SASL; then `Security.mechanism`/`username`/`password` become the JAAS users of the listener (broker
side) and `sasl_*` settings of each client family, and the refusal in `Security.__post_init__` goes.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit.certs import CertificateAuthority, write_pem

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_PROTOCOLS = frozenset({"SASL_PLAINTEXT", "SASL_SSL"})
CLIENT_AUTH = ("none", "requested", "required")
ANONYMOUS = "User:ANONYMOUS"


class SaslNotServedError(ValueError):
    """A test asked for SASL, which the broker does not serve yet."""


@dataclass(frozen=True, slots=True)
class Security:
    """How the broker's listener is secured.

    `protocol` is Kafka's security protocol of the one listener; with SSL, `client_auth` is Kafka's
    `ssl.client.auth` (`required` = mutual TLS, the client presenting a certificate whose subject is
    `CN=<client_cn>`, so its principal is `User:CN=<client_cn>`). `mechanism`, `username`, `password` are for SASL
    (not served yet)."""

    protocol: str = "PLAINTEXT"
    client_auth: str = "none"
    client_cn: str = "client"
    mechanism: str | None = None
    username: str | None = None
    password: str | None = None

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"unknown security protocol {self.protocol!r} (Kafka's are {', '.join(PROTOCOLS)})")
        if self.protocol in SASL_PROTOCOLS:
            raise SaslNotServedError(
                f"security protocol {self.protocol} is not served yet: group-broker has no SASL listeners so far "
                "(issue #17); use PLAINTEXT, SSL or mTLS"
            )
        if self.client_auth not in CLIENT_AUTH:
            raise ValueError(f"unknown ssl.client.auth {self.client_auth!r} (one of {', '.join(CLIENT_AUTH)})")

    @classmethod
    def of(cls, spec: str | Security | None) -> Security:
        """`None`/`"PLAINTEXT"`, `"SSL"` (TLS, no client certificate), `"mTLS"` (TLS with a client certificate,
        `ssl.client.auth=required`), any of Kafka's protocol names, or a `Security` as it is."""
        if isinstance(spec, Security):
            return spec
        name = (spec or "PLAINTEXT").strip()
        if name.lower() == "mtls":
            return cls("SSL", client_auth="required")
        return cls(name.upper())

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def mutual(self) -> bool:
        """Whether the client presents a certificate (`ssl.client.auth` requested or required)."""
        return self.tls and self.client_auth != "none"


@dataclass(frozen=True, slots=True)
class ClientSettings:
    """The settings a client needs to reach the secured broker, for each client family.

    Paths point into the directory `secure` wrote the certificates to, which lives as long as the broker."""

    protocol: str = "PLAINTEXT"
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    #: The principal the broker gives these clients: `User:CN=<client_cn>` on mutual TLS, else User:ANONYMOUS.
    principal: str = ANONYMOUS

    def ssl_context(self) -> ssl.SSLContext | None:
        """A client context trusting the test CA (hostname checked), with the client certificate on mutual TLS;
        None without TLS."""
        if self.ca_file is None:
            return None
        context = ssl.create_default_context(cafile=str(self.ca_file))
        if self.cert_file is not None and self.key_file is not None:
            context.load_cert_chain(self.cert_file, self.key_file)
        return context

    def kafka_python(self) -> dict[str, Any]:
        """Keyword arguments for kafka-python's KafkaProducer/KafkaConsumer/KafkaAdminClient."""
        settings: dict[str, Any] = {"security_protocol": self.protocol}
        if self.ca_file is not None:
            settings["ssl_context"] = self.ssl_context()
        return settings

    def aiokafka(self) -> dict[str, Any]:
        """Keyword arguments for aiokafka's producer, consumer and admin client (the same names as kafka-python)."""
        return self.kafka_python()

    def confluent(self) -> dict[str, str]:
        """librdkafka properties for confluent-kafka's Producer/Consumer/AdminClient (merge in bootstrap.servers)."""
        settings = {"security.protocol": self.protocol}
        if self.ca_file is not None:
            settings["ssl.ca.location"] = str(self.ca_file)
        if self.cert_file is not None and self.key_file is not None:
            settings["ssl.certificate.location"] = str(self.cert_file)
            settings["ssl.key.location"] = str(self.key_file)
        return settings

    def kafkajs(self) -> dict[str, Any]:
        """Options for kafkajs's `new Kafka({...})` (merge in brokers): `ssl` with PEM text, JSON-ready."""
        if self.ca_file is None:
            return {}
        tls: dict[str, Any] = {"ca": [self.ca_file.read_text()]}
        if self.cert_file is not None and self.key_file is not None:
            tls["cert"] = self.cert_file.read_text()
            tls["key"] = self.key_file.read_text()
        return {"ssl": tls}


def secure(spec: str | Security | None, directory: Path) -> tuple[dict[str, str], ClientSettings]:
    """The broker settings (Kafka's keys: one listener of `security.protocol` on an ephemeral 127.0.0.1 port, PEM
    key and truststore) and the client settings for `spec`; certificates are written to `directory`."""
    security = Security.of(spec)
    if not security.tls:
        return {}, ClientSettings()
    directory.mkdir(parents=True, exist_ok=True)
    ca = CertificateAuthority()
    ca_file = write_pem(directory / "ca.pem", ca.cert_pem)
    broker = ca.issue_broker()
    keystore = write_pem(directory / "broker-keystore.pem", broker.key_pem + broker.cert_pem, private=True)
    settings = {
        "listeners": f"{security.protocol}://127.0.0.1:0",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(keystore),
        "ssl.client.auth": security.client_auth,
    }
    if not security.mutual:
        return settings, ClientSettings(security.protocol, ca_file)
    settings |= {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(ca_file)}
    client = ca.issue_client(security.client_cn)
    name = security.client_cn
    cert_file = write_pem(directory / f"{name}.pem", client.cert_pem)
    key_file = write_pem(directory / f"{name}.key", client.key_pem, private=True)
    return settings, ClientSettings(security.protocol, ca_file, cert_file, key_file, f"User:{client.subject}")
