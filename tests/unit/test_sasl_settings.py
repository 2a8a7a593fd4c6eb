"""SASL listener settings read the Kafka way, and everything that cannot be served refused with one line naming the
key: mechanisms not implemented (Kafka's default GSSAPI), PLAIN without users, JAAS configs Kafka refuses, a
broker-wide `sasl.jaas.config` (which Kafka would ignore), and `ssl.principal.mapping.rules` Kafka refuses."""

from __future__ import annotations

import pytest

from broker.config import BrokerConfig
from broker.sasl_listeners import sasl_settings
from broker.security.plain import PlainServer
from broker.security.scram import ScramServer
from broker.startup import StartupError
from broker.tls import principal_mappers

JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";'
LISTENERS = {"listeners": "PLAINTEXT://127.0.0.1:0,CLIENTS://127.0.0.1:0,OTHER://127.0.0.1:0"}
MAP = {"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CLIENTS:SASL_PLAINTEXT,OTHER:SASL_SSL"}


def settings(**raw: str) -> dict[str, object]:
    config = BrokerConfig({**LISTENERS, **MAP, **raw})
    return dict(sasl_settings(config, lambda _user, _mechanism: None, lambda: 0))


def test_mechanisms_per_listener_and_plain_users_from_the_listeners_jaas_config() -> None:
    found = settings(**{
        "sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "listener.name.clients.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
        "listener.name.clients.plain.sasl.jaas.config": JAAS,
        "listener.name.clients.scram-sha-256.connections.max.reauth.ms": "5000",
        "connections.max.reauth.ms": "9000",
    })  # fmt: skip
    clients, other = found["CLIENTS"], found["OTHER"]
    assert clients.mechanisms == ("PLAIN", "SCRAM-SHA-256")  # type: ignore[attr-defined]
    assert other.mechanisms == ("SCRAM-SHA-512",)  # type: ignore[attr-defined]
    assert clients.max_reauth_ms == {"PLAIN": 9000, "SCRAM-SHA-256": 5000}  # type: ignore[attr-defined]
    plain = clients.new_server("PLAIN")  # type: ignore[attr-defined]
    assert isinstance(plain, PlainServer) and isinstance(clients.new_server("SCRAM-SHA-256"), ScramServer)  # type: ignore[attr-defined]
    plain.evaluate(b"\0alice\0alice-secret")
    assert plain.authorization_id == "alice"


def test_no_sasl_listener_means_no_sasl_checks() -> None:
    """Kafka's default GSSAPI only matters where a SASL listener uses it."""
    assert sasl_settings(BrokerConfig({"listeners": "PLAINTEXT://127.0.0.1:0"}), lambda *_: None, lambda: 0) == {}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({}, "listener CLIENTS: invalid value for 'sasl.enabled.mechanisms': GSSAPI is not implemented"),
        (
            {"listener.name.clients.sasl.enabled.mechanisms": "PLAIN,DIGEST-MD5", "sasl.enabled.mechanisms": "PLAIN"},
            "invalid value for 'listener.name.clients.sasl.enabled.mechanisms': DIGEST-MD5 is not implemented",
        ),
        ({"sasl.enabled.mechanisms": ""}, "'sasl.enabled.mechanisms' is empty: No SASL mechanisms are enabled"),
        (
            {"sasl.enabled.mechanisms": "PLAIN"},
            "listener CLIENTS: PLAIN needs users: set 'listener.name.clients.plain.sasl.jaas.config'",
        ),
        (
            {"sasl.enabled.mechanisms": "PLAIN", "listener.name.clients.plain.sasl.jaas.config": "x required a=1;"},
            "invalid value for 'listener.name.clients.plain.sasl.jaas.config': Value not specified for key 'a'",
        ),
        (
            {"sasl.enabled.mechanisms": "SCRAM-SHA-512", "sasl.jaas.config": JAAS},
            "'sasl.jaas.config' is not read by a broker (Kafka ignores it)",
        ),
    ],
)
def test_what_cannot_be_served_is_refused_naming_the_key(raw: dict[str, str], message: str) -> None:
    with pytest.raises(StartupError) as refused:
        settings(**raw)
    assert message in str(refused.value)
    assert "\n" not in str(refused.value)


def test_principal_mapping_rules_per_ssl_listener() -> None:
    config = BrokerConfig({
        "listeners": "A://127.0.0.1:0,B://127.0.0.1:0",
        "listener.security.protocol.map": "A:SSL,B:SSL",
        "ssl.principal.mapping.rules": "RULE:^CN=(.*?)$/$1/L",
        "listener.name.b.ssl.principal.mapping.rules": "DEFAULT",
    })  # fmt: skip
    mappers = principal_mappers(config)
    assert mappers["A"].name("CN=Alice") == "alice"
    assert mappers["B"].name("CN=Alice") == "CN=Alice"


def test_bad_principal_mapping_rules_refuse_the_start() -> None:
    config = BrokerConfig({
        "listeners": "SSL://127.0.0.1:0",
        "listener.name.ssl.ssl.principal.mapping.rules": "RULE:^CN=(.*)$/$1/L junk, oops",
    })  # fmt: skip
    with pytest.raises(StartupError, match=r"listener SSL: invalid value for 'listener\.name\.ssl\.ssl\.principal"):
        principal_mappers(config)
