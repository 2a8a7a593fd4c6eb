"""`group-broker certs` writes certificates and prints properties that a broker serves as printed: a client using
the written files completes mutual TLS and is known by the CN it was given."""

from __future__ import annotations

import asyncio
import ssl
import stat
from pathlib import Path

import pytest

from broker.app import Broker
from broker.config import BrokerConfig, parse_properties
from cli.main import main
from protocol.registry import ApiKey
from tests.broker.conftest import broker_config
from tests.broker.wire import NAMED_API_VERSIONS, WireClient


async def test_the_printed_properties_serve_mutual_tls_with_the_written_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["certs", str(tmp_path / "certs"), "--client", "bob"]) == 0
    printed = parse_properties(capsys.readouterr().out)
    assert stat.S_IMODE((tmp_path / "certs" / "bob.key").stat().st_mode) == 0o600
    raw = {**broker_config(tmp_path).explicit, **printed, "listeners": "SSL://127.0.0.1:0"}
    broker = Broker(BrokerConfig(raw))
    await broker.start()
    try:
        context = ssl.create_default_context(cafile=str(tmp_path / "certs" / "ca.pem"))
        context.load_cert_chain(tmp_path / "certs" / "bob.pem", tmp_path / "certs" / "bob.key")
        client = WireClient(*await asyncio.open_connection("127.0.0.1", broker.ports[0], ssl=context))
        assert (await client.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)).error_code == 0
        (connection,) = broker.connections
        assert connection.session.principal == "User:CN=bob"
        await client.close()
    finally:
        await broker.stop()


def test_an_unwritable_directory_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("")
    assert main(["certs", str(tmp_path / "file" / "certs")]) == 1
    assert capsys.readouterr().err.startswith("group-broker certs: cannot write to ")
