"""SCRAM users from the CLI: `group-broker configs --entity-type users` (kafka-configs.sh's options and output, over
AlterUserScramCredentials/DescribeUserScramCredentials) and `group-broker scram add` (kafka-storage.sh's
`--add-scram`, offline, refused while a broker runs on the directory). Each credential is proved by a SCRAM login."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from broker.app import Broker
from broker.config import BrokerConfig
from broker.security.scram import SCRAM_SHA_256, SCRAM_SHA_512, ScramMechanism
from cli.client_security import read_command_config
from cli.kafka_client import KafkaClientError
from cli.main import main
from cli.scram import parse_spec
from protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from protocol.messages.sasl_handshake import SaslHandshakeRequest
from protocol.registry import ApiKey
from tests.broker.conftest import broker_config
from tests.broker.wire import WireClient
from tests.security.scram_client import ScramClient

LOG_LINE = re.compile(r"\d{4}-\d\d-\d\d ")
SCRAM_LISTENER = {
    "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
    "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
}


def config(tmp_path: Path) -> BrokerConfig:
    return BrokerConfig({**broker_config(tmp_path).explicit, **SCRAM_LISTENER})


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    instance = Broker(config(tmp_path))
    await instance.start()
    yield instance
    await instance.stop()


async def scram_login(port: int, mechanism: ScramMechanism, user: str, password: str) -> int:
    """The error code of the final SaslAuthenticate (0: logged in)."""
    client = await WireClient.connect(port)
    try:
        await client.call(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism=mechanism.name))
        scram = ScramClient(mechanism, user, password)
        first = await client.call(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=scram.first()))
        if first.error_code:
            return int(first.error_code)
        final = scram.final(first.auth_bytes)
        return int(
            (await client.call(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=final))).error_code
        )
    finally:
        client.writer.close()


async def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of the CLI; the in-process broker's own log lines (which structlog prints to
    stdout, each starting with a timestamp) are left out."""
    code = await asyncio.to_thread(main, list(args))
    captured = capsys.readouterr()
    printed = [line for line in captured.out.splitlines(keepends=True) if not LOG_LINE.match(line)]
    return code, "".join(printed), captured.err


async def test_configs_adds_describes_and_deletes_a_scram_user_over_the_wire(
    broker: Broker, capsys: pytest.CaptureFixture[str]
) -> None:
    bootstrap, sasl_port = f"127.0.0.1:{broker.ports[0]}", broker.ports[1]
    users = ["--entity-type", "users", "--entity-name", "alice"]
    add = "SCRAM-SHA-256=[password=alice-256],SCRAM-SHA-512=[iterations=8192,password=alice-secret]"
    assert await cli(capsys, "configs", "--bootstrap-server", bootstrap, "--alter", "--add-config", add, *users) == (
        0, "Completed updating config for user alice.\n", "",
    )  # fmt: skip
    assert await scram_login(sasl_port, SCRAM_SHA_512, "alice", "alice-secret") == 0
    assert await scram_login(sasl_port, SCRAM_SHA_256, "alice", "alice-256") == 0
    code, out, _ = await cli(capsys, "configs", "--bootstrap-server", bootstrap, "--describe", *users)
    assert (code, out) == (
        0, "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=4096, "
        "SCRAM-SHA-512=iterations=8192\n",
    )  # fmt: skip
    deleted = await cli(
        capsys, "configs", "--bootstrap-server", bootstrap, "--alter", "--delete-config", "SCRAM-SHA-512", *users
    )
    assert deleted[0] == 0
    assert await scram_login(sasl_port, SCRAM_SHA_512, "alice", "alice-secret") == 58
    code, _, err = await cli(capsys, "configs", "--bootstrap-server", bootstrap, "--alter", "--delete-config",
                             "SCRAM-SHA-512", *users)  # fmt: skip
    assert (code, err) == (1, "Error: alice: Attempt to delete a user credential that does not exist\n")


async def test_configs_refuses_too_few_iterations_with_kafkas_message(
    broker: Broker, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = await cli(
        capsys, "configs", "--bootstrap-server", f"127.0.0.1:{broker.ports[0]}", "--alter",
        "--add-config", "SCRAM-SHA-512=[iterations=100,password=x]", "--entity-type", "users", "--entity-name", "bob",
    )  # fmt: skip
    assert (code, err) == (1, "Error: bob: Too few iterations\n")


async def test_scram_add_seeds_users_before_the_first_start(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log_dir = config(tmp_path).log_dir
    code, out, _ = await cli(
        capsys, "scram", "add", "--log-dir", str(log_dir),
        "--add-scram", "SCRAM-SHA-512=[name=alice,password=alice-secret]",
        "--add-scram", 'SCRAM-SHA-256=[name=bob,iterations=8192,password="b,o]b"]',
    )  # fmt: skip
    assert code == 0 and "Added SCRAM credentials for user alice" in out
    instance = Broker(config(tmp_path))
    await instance.start()
    try:
        assert await scram_login(instance.ports[1], SCRAM_SHA_512, "alice", "alice-secret") == 0
        assert await scram_login(instance.ports[1], SCRAM_SHA_256, "bob", "b,o]b") == 0
        code, _, err = await cli(
            capsys, "scram", "add", "--log-dir", str(log_dir), "--add-scram", "SCRAM-SHA-512=[name=c,password=c]"
        )
        assert code == 1 and "locked" in err  # a running broker's directory is not written behind its back
    finally:
        await instance.stop()


def test_spec_parsing_as_kafkas_tools_write_it() -> None:
    spec = parse_spec("SCRAM-SHA-512=[iterations=8192,password=alice-secret]")
    assert (spec.mechanism, spec.iterations, spec.fields["password"]) == (SCRAM_SHA_512, 8192, "alice-secret")
    assert parse_spec("SCRAM-SHA-256=[password=x]").iterations == 4096
    with pytest.raises(KafkaClientError, match="MECHANISM one of SCRAM-SHA-256, SCRAM-SHA-512"):
        parse_spec("PLAIN=[password=x]")


async def test_configs_reaches_a_sasl_listener_with_a_command_config(
    broker: Broker, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Kafka's tools' `--command-config`: the CLI logs in with SCRAM over the SASL listener itself (the admin user
    was seeded over PLAINTEXT), and a wrong password is the broker's message."""
    plain_bootstrap, sasl_bootstrap = f"127.0.0.1:{broker.ports[0]}", f"127.0.0.1:{broker.ports[1]}"
    users = ["--entity-type", "users", "--entity-name", "admin"]
    add = "SCRAM-SHA-512=[password=admin-secret]"
    assert (
        await cli(capsys, "configs", "--bootstrap-server", plain_bootstrap, "--alter", "--add-config", add, *users)
    )[0] == 0
    jaas = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="{}";'
    good, bad = tmp_path / "admin.properties", tmp_path / "wrong.properties"
    for path, password in ((good, "admin-secret"), (bad, "nope")):
        path.write_text(
            f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config={jaas.format(password)}\n"
        )
    code, out, _ = await cli(
        capsys, "configs", "--bootstrap-server", sasl_bootstrap, "--command-config", str(good), "--describe", *users
    )
    assert (code, out) == (0, "SCRAM credential configs for user-principal 'admin' are SCRAM-SHA-512=iterations=4096\n")
    code, _, err = await cli(
        capsys, "configs", "--bootstrap-server", sasl_bootstrap, "--command-config", str(bad), "--describe", *users
    )
    assert (code, err) == (
        1,
        "Error: Authentication failed during authentication due to invalid credentials with SASL mechanism "
        "SCRAM-SHA-512\n",
    )


def test_a_command_config_key_the_cli_cannot_honour_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "client.properties"
    path.write_text("security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI\n")
    with pytest.raises(KafkaClientError, match=r"invalid value 'GSSAPI' for 'sasl\.mechanism'"):
        read_command_config(path)
    path.write_text("security.protocol=SSL\nssl.truststore.password=x\n")
    with pytest.raises(KafkaClientError, match=r"ssl\.truststore\.password not supported"):
        read_command_config(path)
