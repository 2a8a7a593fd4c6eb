"""An SSL listener's settings read the Kafka way: PEM keystores from a file or inline (one line, as a properties
value), per-listener overrides, and every unusable setting refused before anything is served, naming its key."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from broker.app import Broker
from broker.config import BrokerConfig, ConfigError
from broker.startup import StartupError
from broker.tls import openssl_cipher_name, server_context
from tests.broker.conftest import broker_config
from tests.support.tls import TlsFiles
from toolkit.certs import CertificateAuthority


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    return TlsFiles.create(tmp_path_factory.mktemp("certs"))


def settings(**raw: str) -> BrokerConfig:
    return BrokerConfig({"listeners": "SSL://127.0.0.1:0", **{k.replace("_", "."): v for k, v in raw.items()}})


def context_for(config: BrokerConfig) -> ssl.SSLContext:
    return server_context(config.listener_values("SSL"))


def test_a_keystore_file_holding_key_and_chain(tmp_path: Path, tls: TlsFiles) -> None:
    keystore = tmp_path / "keystore.pem"
    keystore.write_text(tls.files.broker_key.read_text() + tls.files.broker_cert.read_text())
    context = context_for(settings(ssl_keystore_type="PEM", ssl_keystore_location=str(keystore)))
    assert context.verify_mode == ssl.CERT_NONE
    assert (context.minimum_version, context.maximum_version) == (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3)


def test_an_inline_keystore_on_one_line_with_an_encrypted_key() -> None:
    issued = CertificateAuthority().issue_broker(password="secret")
    one_line = {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.certificate.chain": issued.cert_pem.decode().replace("\n", " "),
        "ssl.keystore.key": issued.key_pem.decode().replace("\n", " "),
        "ssl.key.password": "secret",
    }
    assert context_for(BrokerConfig({"listeners": "SSL://127.0.0.1:0", **one_line})).verify_mode == ssl.CERT_NONE
    with pytest.raises(ConfigError, match=r"^invalid value for 'ssl\.keystore\.key': "):
        context_for(BrokerConfig({"listeners": "SSL://127.0.0.1:0", **one_line, "ssl.key.password": "wrong"}))


def test_per_listener_keys_override_the_broker_wide_ones(tls: TlsFiles) -> None:
    raw = {**tls.broker_properties(client_auth="none"), **tls.broker_properties(prefix="listener.name.ssl.")}
    config = BrokerConfig({"listeners": "SSL://127.0.0.1:0", **raw})
    assert context_for(config).verify_mode == ssl.CERT_REQUIRED
    raw["listener.name.ssl.ssl.client.auth"] = "requested"
    assert context_for(BrokerConfig({"listeners": "SSL://127.0.0.1:0", **raw})).verify_mode == ssl.CERT_OPTIONAL


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"ssl.keystore.type": "JKS"}, r"^invalid value for 'ssl\.keystore\.type': JKS is not supported; only PEM$"),
        ({"ssl.keystore.password": "x"}, r"^invalid value for 'ssl\.keystore\.password': SSL key store password"),
        ({"ssl.keystore.key": None}, r"^an SSL listener needs 'ssl\.keystore\.key'"),
        ({"ssl.enabled.protocols": "TLSv1.1"}, r"^invalid value for 'ssl\.enabled\.protocols': TLSv1\.1 \(supported"),
        ({"ssl.cipher.suites": "TLS_NOPE"}, r"^invalid value for 'ssl\.cipher\.suites': unknown .* TLS_NOPE$"),
        ({"ssl.truststore.location": None}, r"^'ssl\.client\.auth' asks for client certificates"),
        ({"ssl.truststore.location": "/nonexistent"}, r"^invalid value for 'ssl\.truststore\.location': No such"),
        ({"ssl.truststore.type": "PKCS12"}, r"^invalid value for 'ssl\.truststore\.type': PKCS12 is not supported"),
    ],
)
def test_an_unusable_setting_is_refused_naming_its_key(
    tls: TlsFiles, change: dict[str, str | None], message: str
) -> None:
    raw: dict[str, str | None] = {**tls.broker_properties(), **change}
    config = BrokerConfig({"listeners": "SSL://127.0.0.1:0", **{k: v for k, v in raw.items() if v is not None}})
    with pytest.raises(ConfigError, match=message):
        context_for(config)


def test_the_error_names_the_per_listener_key_it_came_from(tls: TlsFiles) -> None:
    raw = {**tls.broker_properties(prefix="listener.name.ssl."), "listener.name.ssl.ssl.keystore.type": "JKS"}
    with pytest.raises(ConfigError, match=r"'listener\.name\.ssl\.ssl\.keystore\.type': JKS"):
        context_for(BrokerConfig({"listeners": "SSL://127.0.0.1:0", **raw}))


async def test_a_bad_setting_refuses_the_start_before_anything_is_written(tmp_path: Path) -> None:
    raw = {**broker_config(tmp_path).explicit, "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0"}
    raw["ssl.keystore.type"] = "PEM"
    with pytest.raises(StartupError, match=r"^listener SSL: an SSL listener needs 'ssl\.keystore\.location'"):
        Broker(BrokerConfig(raw))
    assert not (tmp_path / "data").exists()


def test_cipher_suites_take_javas_iana_names(tls: TlsFiles) -> None:
    assert openssl_cipher_name("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256") == "ECDHE-ECDSA-AES128-GCM-SHA256"
    assert openssl_cipher_name("TLS_AES_256_GCM_SHA384") == "TLS_AES_256_GCM_SHA384"
    raw = {**tls.broker_properties(), "ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"}
    context = context_for(BrokerConfig({"listeners": "SSL://127.0.0.1:0", **raw}))
    tls12 = [c["name"] for c in context.get_ciphers() if c["protocol"] == "TLSv1.2"]
    assert tls12 == ["ECDHE-ECDSA-AES256-GCM-SHA384"]
