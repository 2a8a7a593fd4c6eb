"""What a test asks for when its broker should run secured, and the client settings that go with it.

`Security` is the request (`"PLAINTEXT"`, `"SSL"`, `"mTLS"` or a `Security(...)` for the details); `secure` turns
it into the broker's Kafka settings (certificates made by `toolkit.certs` in a directory the caller owns) and a
`ClientSettings`, which hands each client family its own spelling of the same settings: kafka-python and aiokafka
keyword arguments (with an `ssl.SSLContext`), a confluent-kafka (librdkafka) config dict, and a kafkajs-style dict
(PEM text, JSON-ready for a Node process). Tests use these settings rather than writing them, so what they prove is
what a user's clients run with.

SASL: `SASL_PLAINTEXT` and `SASL_SSL` with PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (`"SASL_SSL:SCRAM-SHA-512"`, or a
`Security` naming the mechanism and user). The test's user is made the way a Kafka operator makes one: a
`user_<name>="<password>"` entry of the listener's PLAIN JAAS config, or a SCRAM credential written to the data
directory before the first start (`scram_spec`, what `group-broker scram add` writes). Each client family gets the
matching `sasl_*` settings, and `ClientSettings.principal` is `User:<username>`.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from toolkit.certs import CertificateAuthority, write_pem

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_PROTOCOLS = frozenset({"SASL_PLAINTEXT", "SASL_SSL"})
CLIENT_AUTH = ("none", "requested", "required")
ANONYMOUS = "User:ANONYMOUS"


SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
#: The mechanism a bare "SASL_PLAINTEXT"/"SASL_SSL" gets: PLAIN without TLS, SCRAM-SHA-512 over TLS (what the
#: README's copy-paste configs use).
DEFAULT_MECHANISM = {"SASL_PLAINTEXT": "PLAIN", "SASL_SSL": "SCRAM-SHA-512"}
PLAIN_LOGIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_LOGIN = "org.apache.kafka.common.security.scram.ScramLoginModule"


@dataclass(frozen=True, slots=True)
class Security:
    """How the broker's listener is secured.

    `protocol` is Kafka's security protocol of the one listener; with SSL, `client_auth` is Kafka's
    `ssl.client.auth` (`required` = mutual TLS, the client presenting a certificate whose subject is
    `CN=<client_cn>`, so its principal is `User:CN=<client_cn>`). On SASL_PLAINTEXT/SASL_SSL, `mechanism` (PLAIN,
    SCRAM-SHA-256 or SCRAM-SHA-512; `DEFAULT_MECHANISM` when None) with the user `username`/`password`, whose
    principal is `User:<username>`."""

    protocol: str = "PLAINTEXT"
    client_auth: str = "none"
    client_cn: str = "client"
    mechanism: str | None = None
    username: str = "alice"
    password: str = "alice-secret"  # noqa: S105 - a throwaway test user's, made for each test broker

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"unknown security protocol {self.protocol!r} (Kafka's are {', '.join(PROTOCOLS)})")
        if self.client_auth not in CLIENT_AUTH:
            raise ValueError(f"unknown ssl.client.auth {self.client_auth!r} (one of {', '.join(CLIENT_AUTH)})")
        if self.protocol not in SASL_PROTOCOLS:
            if self.mechanism is not None:
                raise ValueError(f"a SASL mechanism ({self.mechanism}) needs SASL_PLAINTEXT or SASL_SSL")
            return
        if self.mechanism is None:
            object.__setattr__(self, "mechanism", DEFAULT_MECHANISM[self.protocol])
        if self.mechanism not in SASL_MECHANISMS:
            raise ValueError(
                f"SASL mechanism {self.mechanism!r}: the fixture makes users for {', '.join(SASL_MECHANISMS)}"
            )
        if not self.username or not self.password or any(c in self.username for c in '",=[] '):
            raise ValueError(f"a SASL user needs a plain name and a password (got {self.username!r})")

    @classmethod
    def of(cls, spec: str | Security | None) -> Security:
        """`None`/`"PLAINTEXT"`, `"SSL"` (TLS, no client certificate), `"mTLS"` (TLS with a client certificate,
        `ssl.client.auth=required`), any of Kafka's protocol names, a SASL protocol with its mechanism
        (`"SASL_SSL:SCRAM-SHA-256"`), or a `Security` as it is."""
        if isinstance(spec, Security):
            return spec
        name, _, mechanism = (spec or "PLAINTEXT").strip().partition(":")
        if name.lower() == "mtls" and not mechanism:
            return cls("SSL", client_auth="required")
        return cls(name.upper(), mechanism=mechanism.upper() or None)

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def mutual(self) -> bool:
        """Whether the client presents a certificate (`ssl.client.auth` requested or required)."""
        return self.tls and self.client_auth != "none"

    @property
    def sasl(self) -> bool:
        return self.protocol in SASL_PROTOCOLS

    @property
    def scram_spec(self) -> str | None:
        """The user as `group-broker scram add` takes it (`SCRAM-SHA-512=[name=alice,password=...]`), None unless the
        mechanism is SCRAM."""
        if not self.sasl or self.mechanism == "PLAIN":
            return None
        return f"{self.mechanism}=[name={self.username},password={self.password}]"

    def sasl_settings(self) -> dict[str, str]:
        """The broker's Kafka keys for this listener's SASL: the enabled mechanism and its JAAS config (PLAIN's
        users are its `user_<name>` options; SCRAM's users live in the credential store)."""
        if not self.sasl:
            return {}
        mechanism = str(self.mechanism)
        prefix = f"listener.name.{self.protocol.lower()}."
        if mechanism == "PLAIN":
            jaas = f'{PLAIN_LOGIN} required user_{self.username}="{self.password}";'
        else:
            jaas = f"{SCRAM_LOGIN} required;"
        return {
            f"{prefix}sasl.enabled.mechanisms": mechanism,
            f"{prefix}{mechanism.lower()}.sasl.jaas.config": jaas,
        }


@dataclass(frozen=True, slots=True)
class ClientSettings:
    """The settings a client needs to reach the secured broker, for each client family.

    Paths point into the directory `secure` wrote the certificates to, which lives as long as the broker."""

    protocol: str = "PLAINTEXT"
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    #: The principal the broker gives these clients: `User:<username>` on SASL, `User:CN=<client_cn>` on mutual TLS,
    #: else User:ANONYMOUS.
    principal: str = ANONYMOUS
    #: SASL: the mechanism and the user the client logs in as (None without SASL).
    mechanism: str | None = None
    username: str | None = None
    password: str | None = None

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
        if self.mechanism is not None:
            settings |= {
                "sasl_mechanism": self.mechanism,
                "sasl_plain_username": self.username,
                "sasl_plain_password": self.password,
            }
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
        if self.mechanism is not None:
            settings |= {"sasl.mechanism": self.mechanism, "sasl.username": str(self.username)}
            settings["sasl.password"] = str(self.password)
        return settings

    def kafkajs(self) -> dict[str, Any]:
        """Options for kafkajs's `new Kafka({...})` (merge in brokers): `ssl` with PEM text and `sasl` with the
        mechanism in kafkajs's lower case, JSON-ready."""
        settings: dict[str, Any] = {}
        if self.ca_file is not None:
            tls: dict[str, Any] = {"ca": [self.ca_file.read_text()]}
            if self.cert_file is not None and self.key_file is not None:
                tls["cert"] = self.cert_file.read_text()
                tls["key"] = self.key_file.read_text()
            settings["ssl"] = tls
        if self.mechanism is not None:
            user = {"username": self.username, "password": self.password}
            settings["sasl"] = {"mechanism": self.mechanism.lower(), **user}
        return settings


def secure(spec: str | Security | None, directory: Path) -> tuple[dict[str, str], ClientSettings]:
    """The broker settings (Kafka's keys: one listener of `security.protocol` on an ephemeral 127.0.0.1 port, PEM
    key and truststore, the SASL mechanism and JAAS config) and the client settings for `spec`; certificates are
    written to `directory`. A SCRAM user is not in these settings: the caller writes `Security.scram_spec` to the
    broker's data directory before it starts (`toolkit.embedded` does)."""
    security = Security.of(spec)
    if not security.tls:
        if not security.sasl:
            return {}, ClientSettings()
        settings = {"listeners": f"{security.protocol}://127.0.0.1:0", **security.sasl_settings()}
        return settings, _with_user(ClientSettings(security.protocol), security)
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
        return settings | security.sasl_settings(), _with_user(ClientSettings(security.protocol, ca_file), security)
    settings |= {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(ca_file)}
    client = ca.issue_client(security.client_cn)
    name = security.client_cn
    cert_file = write_pem(directory / f"{name}.pem", client.cert_pem)
    key_file = write_pem(directory / f"{name}.key", client.key_pem, private=True)
    client_settings = ClientSettings(security.protocol, ca_file, cert_file, key_file, f"User:{client.subject}")
    return settings | security.sasl_settings(), _with_user(client_settings, security)


def _with_user(settings: ClientSettings, security: Security) -> ClientSettings:
    """The SASL user on top of the TLS settings (the SASL principal wins over a certificate's, as in Kafka)."""
    if not security.sasl:
        return settings
    return replace(
        settings,
        principal=f"User:{security.username}",
        mechanism=security.mechanism,
        username=security.username,
        password=security.password,
    )
