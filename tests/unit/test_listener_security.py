"""Security settings are never ignored: a listener whose security settings cannot be served (a mechanism not
implemented, an unusable keystore) is a startup error naming the key, and a listener on a wildcard address warns
once that it has no authentication.

Before this, `listeners=SSL://...` (or a protocol map sending a listener to SASL) silently served plaintext with no
authentication: the operator asked for security and got none, without a word.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from structlog.testing import capture_logs

import broker.app
from broker.app import Broker
from broker.config import BrokerConfig, ConfigError
from tests.broker.conftest import broker_config
from tests.support.broker_process import run_server
from tests.support.tls import TlsFiles


@pytest.mark.parametrize("protocol", ["SASL_PLAINTEXT", "SASL_SSL"])
def test_sasl_listeners_are_accepted_by_the_configuration(protocol: str) -> None:
    """Their SASL (and TLS) settings are checked when the broker is built: see tests/unit/test_sasl_settings.py."""
    assert BrokerConfig({"listeners": f"{protocol}://127.0.0.1:9093"}).listeners == [(protocol, "127.0.0.1", 9093)]


def test_a_custom_listener_name_mapped_to_plaintext_is_served() -> None:
    raw = {"listeners": "CLIENTS://127.0.0.1:9093", "listener.security.protocol.map": "CLIENTS:PLAINTEXT"}
    assert BrokerConfig(raw).listeners == [("CLIENTS", "127.0.0.1", 9093)]


def test_a_listener_without_a_protocol_is_an_error_naming_the_map() -> None:
    with pytest.raises(ConfigError, match=r"'listener\.security\.protocol\.map'.*no security protocol.*INTERNAL"):
        BrokerConfig({"listeners": "INTERNAL://127.0.0.1:9093"})


def test_an_unknown_protocol_in_the_map_is_an_error() -> None:
    with pytest.raises(ConfigError, match=r"'listener\.security\.protocol\.map'.*TLS"):
        BrokerConfig({"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,X:TLS"})
    with pytest.raises(ConfigError, match=r"'listener\.security\.protocol\.map'"):
        BrokerConfig({"listener.security.protocol.map": "PLAINTEXT"})


def test_kafkas_default_map_is_the_default() -> None:
    assert BrokerConfig().security_protocol_map == {
        "SASL_SSL": "SASL_SSL",
        "PLAINTEXT": "PLAINTEXT",
        "SSL": "SSL",
        "SASL_PLAINTEXT": "SASL_PLAINTEXT",
    }


def test_server_refuses_a_sasl_listener_with_kafkas_default_mechanism_with_one_line_and_exit_2(
    tmp_path: Path,
) -> None:
    """Kafka's default `sasl.enabled.mechanisms` is GSSAPI (Kerberos), which group-broker does not implement."""
    done = run_server("listeners=SASL_PLAINTEXT://127.0.0.1:0", f"log.dirs={tmp_path / 'data'}")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "group-broker: listener SASL_PLAINTEXT: invalid value for 'sasl.enabled.mechanisms': GSSAPI is not "
        "implemented by group-broker (implemented: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)"
    ]
    assert not (tmp_path / "data").exists()  # refused before anything was written


def test_server_refuses_an_ssl_listener_without_usable_tls_settings_with_one_line_naming_the_key(
    tmp_path: Path,
) -> None:
    """Kafka's default keystore type is JKS, which is not served: the line says which key to change."""
    done = run_server("listeners=SSL://127.0.0.1:0", f"log.dirs={tmp_path / 'data'}")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "group-broker: listener SSL: invalid value for 'ssl.keystore.type': JKS is not supported; only PEM"
    ]
    assert not (tmp_path / "data").exists()


@pytest.fixture
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never bind a wildcard address on a shared machine: the listener really binds 127.0.0.1."""
    real_bind_listener = broker.app.bind_listener

    def bind(listener: str, _host: str, port: int) -> socket.socket:
        return real_bind_listener(listener, "127.0.0.1", port)

    monkeypatch.setattr(broker.app, "bind_listener", bind)


@pytest.mark.usefixtures("loopback_only")
async def test_a_wildcard_listener_warns_once_that_it_has_no_authentication(tmp_path: Path) -> None:
    listeners = "PLAINTEXT://0.0.0.0:0,LOOP://127.0.0.1:0,ANY://:0"
    protocol_map = {"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,LOOP:PLAINTEXT,ANY:PLAINTEXT"}
    config = broker_config(tmp_path, listeners=listeners, **protocol_map)
    instance = Broker(config)
    with capture_logs() as logs:
        await instance.start()
    await instance.stop()
    warnings = [entry for entry in logs if entry["event"] == "listener.no_authentication"]
    assert [(w["log_level"], w["listener"]) for w in warnings] == [
        ("warning", "PLAINTEXT://0.0.0.0:0"),
        ("warning", "ANY://:0"),
    ]


@pytest.mark.usefixtures("loopback_only")
async def test_a_wildcard_ssl_listener_requiring_client_certificates_does_not_warn(tmp_path: Path) -> None:
    """Mutual TLS authenticates every client; TLS without client certificates only encrypts, so it still warns."""
    tls = TlsFiles.create(tmp_path / "certs")
    raw = {
        **broker_config(tmp_path).explicit,
        "listeners": "SSL://0.0.0.0:0,OPEN://0.0.0.0:0",
        "listener.security.protocol.map": "SSL:SSL,OPEN:SSL",
        **tls.broker_properties(client_auth="none"),
        "listener.name.ssl.ssl.client.auth": "required",
    }
    instance = Broker(BrokerConfig(raw))
    with capture_logs() as logs:
        await instance.start()
    await instance.stop()
    warnings = [entry["listener"] for entry in logs if entry["event"] == "listener.no_authentication"]
    assert warnings == ["OPEN://0.0.0.0:0"]
