"""`control.listener.token`: with a token every control API request must carry it, and only with one may the control
API listen beyond loopback (what `docker compose --profile published up` needs on Docker Desktop).

Everything listens on 127.0.0.1 with ephemeral ports: the Host header stands in for a non-loopback address."""

from __future__ import annotations

import base64
import ssl
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest

from broker.config import BrokerConfig, ConfigError, load_config
from broker.config_describe import broker_entries
from broker.config_layers import BrokerLayers
from cli.main import main
from storage.broker_configs import DynamicBrokerConfigs
from tests.support.broker_process import run_server
from toolkit.control_api import presented_token
from toolkit.embedded import EmbeddedBroker

TOKEN = "s3cret-token"


@pytest.fixture(scope="module")
def guarded() -> Iterator[str]:
    """A broker whose control API on loopback requires TOKEN; yields the control URL."""
    broker = EmbeddedBroker({"control.listener": "http://127.0.0.1:0", "control.listener.token": TOKEN}).start()
    try:
        assert broker.control_url is not None
        yield broker.control_url
    finally:
        broker.stop()


async def call(url: str, method: str = "GET", path: str = "/time", **kwargs: Any) -> tuple[int, Any, Any]:
    async with aiohttp.ClientSession() as session, session.request(method, url + path, **kwargs) as answer:
        return answer.status, await answer.json(), answer.headers


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_without_the_token_or_with_a_wrong_one_every_route_is_401(guarded: str) -> None:
    for headers in ({}, bearer("wrong"), bearer(""), {"Authorization": "Token " + TOKEN}):
        for method, path in (("GET", "/"), ("GET", "/time"), ("POST", "/time/advance"), ("GET", "/metrics")):
            status, body, answer_headers = await call(guarded, method, path, headers=headers, json={"ms": 1})
            assert (status, body["error"].split(":")[0]) == (401, "the control API needs its token"), (headers, path)
            assert answer_headers["WWW-Authenticate"].startswith("Basic ")


async def test_with_the_token_requests_are_served_even_addressed_to_another_host(guarded: str) -> None:
    status, body, _ = await call(guarded, headers=bearer(TOKEN))
    assert status == 200 and "now_ms" in body
    status, body, _ = await call(guarded, "POST", "/time/advance", headers=bearer(TOKEN), json={"ms": 5})
    assert status == 200, body
    # Published through Docker, the request names the host's address: the token, not the Host, decides.
    status, _, _ = await call(guarded, headers={**bearer(TOKEN), "Host": "192.168.1.10:9644"})
    assert status == 200


async def test_a_browser_can_send_the_token_as_basic_password(guarded: str) -> None:
    basic = base64.b64encode(f"anyone:{TOKEN}".encode()).decode()
    status, _, _ = await call(guarded, headers={"Authorization": f"Basic {basic}"})
    assert status == 200
    wrong = base64.b64encode(b"anyone:nope").decode()
    status, _, _ = await call(guarded, headers={"Authorization": f"Basic {wrong}"})
    assert status == 401


async def test_a_page_of_another_origin_is_refused_even_with_the_token(guarded: str) -> None:
    """A browser sends cached Basic credentials along with a cross-site form: the Origin must be the API's own."""
    status, body, _ = await call(
        guarded, "POST", "/time/advance", json={"ms": 1}, headers={**bearer(TOKEN), "Origin": "https://evil.example"}
    )
    assert (status, body["error"]) == (403, "the control API only answers pages of its own origin")
    own_origin = guarded  # http://127.0.0.1:port, the same host:port as the Host header aiohttp sends
    status, _, _ = await call(guarded, headers={**bearer(TOKEN), "Origin": own_origin})
    assert status == 200


def test_presented_token_reads_bearer_and_basic_and_nothing_else() -> None:
    assert presented_token("Bearer abc") == "abc"
    assert presented_token("bearer  abc ") == "abc"
    assert presented_token("Basic " + base64.b64encode(b"u:p:q").decode()) == "p:q"
    assert presented_token("Basic not-base64!") is None
    assert presented_token("Digest abc") is None
    assert presented_token("") is None


def test_beyond_loopback_only_with_a_token() -> None:
    with pytest.raises(ConfigError, match=r"without 'control\.listener\.token'"):
        BrokerConfig({"control.listener": "http://0.0.0.0:9644"})
    config = BrokerConfig({"control.listener": "http://0.0.0.0:9644", "control.listener.token": TOKEN})
    assert config["control.listener.token"] == TOKEN
    with pytest.raises(ConfigError, match="an empty token lets anyone in"):
        BrokerConfig({"control.listener.token": ""})


def test_the_refusal_at_startup_is_one_line_naming_the_token_key() -> None:
    done = run_server("control.listener=http://0.0.0.0:0")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "control.listener.token" in lines[0], done.stderr


def test_the_token_comes_from_the_environment_and_is_described_as_sensitive() -> None:
    config = load_config(None, [], {"KAFKA_CONTROL_LISTENER_TOKEN": TOKEN})
    assert config["control.listener.token"] == TOKEN
    layers = BrokerLayers(config, DynamicBrokerConfigs({}, {}))
    [entry] = [e for e in broker_entries(layers) if e.name == "control.listener.token"]
    assert entry.sensitive and entry.value is None


def test_the_cli_sends_the_token_from_its_option_or_the_environment(
    guarded: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GROUP_BROKER_CONTROL_TOKEN", raising=False)
    assert main(["storage", "--control", guarded, "--json"]) == 1
    error = capsys.readouterr().err
    assert "answered 401: the control API needs its token" in error and "--control-token" in error
    assert main(["storage", "--control", guarded, "--json", "--control-token", TOKEN]) == 0
    assert "offsets_partitions" in capsys.readouterr().out
    monkeypatch.setenv("GROUP_BROKER_CONTROL_TOKEN", TOKEN)
    assert main(["storage", "--control", guarded, "--json"]) == 0
    with pytest.raises(SystemExit):
        main(["storage", "--help"])
    assert TOKEN not in capsys.readouterr().out


async def test_an_https_control_listener_is_served_with_the_brokers_tls_settings() -> None:
    """`https://`: the broker's `ssl.*` keys (here mutual TLS: the caller needs the client certificate too)."""
    overrides = {"control.listener": "https://127.0.0.1:0", "control.listener.token": TOKEN}
    broker = EmbeddedBroker(overrides, security="mTLS").start()
    try:
        url = broker.control_url
        assert url is not None and url.startswith("https://127.0.0.1:")
        status, body, _ = await call(url, headers=bearer(TOKEN), ssl=broker.client_settings.ssl_context())
        assert status == 200 and "now_ms" in body
        without_certificate = ssl.create_default_context(cafile=str(broker.client_settings.ca_file))
        with pytest.raises(aiohttp.ClientError):
            await call(url, headers=bearer(TOKEN), ssl=without_certificate)
    finally:
        broker.stop()


def test_an_https_control_listener_without_tls_settings_is_refused_at_startup_in_one_line() -> None:
    done = run_server("control.listener=https://127.0.0.1:0")
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "control.listener (https)" in lines[0] and "ssl.keystore" in lines[0], done.stderr
