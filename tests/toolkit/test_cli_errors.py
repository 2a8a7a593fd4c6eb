"""CLI errors are sentences that say what to do, never raw exceptions (issue #11)."""

from __future__ import annotations

import socket
from collections.abc import Callable

import pytest

from cli.main import main
from cli.serve import main as serve_main
from toolkit.pytest_plugin import GroupBrokerHandle


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("command", [["groups", "timeline", "g"], ["storage"], ["nodes", "list"]])
def test_a_broker_without_a_control_listener_is_explained(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    control = f"http://127.0.0.1:{_closed_port()}"
    assert main([*command, "--control", control]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"Error: cannot reach group-broker's control API at {control}")
    assert "control.listener" in err
    assert "urlopen error" not in err


@pytest.mark.parametrize("command", [["groups", "list"], ["groups", "describe", "g"]])
def test_an_unreachable_bootstrap_server_is_a_sentence(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    server = f"127.0.0.1:{_closed_port()}"
    assert main([*command, "--bootstrap-server", server]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"Error: cannot reach the broker at {server} (--bootstrap-server): ")
    assert "Errno" not in err


def test_bad_arguments_are_a_usage_message(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["offsets", "reset", "g"])  # no --to-earliest / --to-latest / --to-offset
    assert exit_.value.code == 2
    assert "one of the arguments --to-earliest --to-latest --to-offset is required" in capsys.readouterr().err


def test_describing_an_unknown_group_says_it_does_not_exist(
    group_broker: GroupBrokerHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    """Kafka's kafka-consumer-groups.sh --describe: "Error: Consumer group 'x' does not exist." (a Dead group)."""
    assert main(["groups", "describe", "nobody", "--bootstrap-server", group_broker.bootstrap_servers]) == 1
    captured = capsys.readouterr()
    assert captured.err == "Error: Consumer group 'nobody' does not exist.\n"
    assert captured.out == ""


def test_resetting_an_unknown_group_says_it_does_not_exist(
    group_broker: GroupBrokerHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --topic there is nothing to reset for a group the coordinator does not know: a sentence, exit 1."""
    bootstrap = group_broker.bootstrap_servers
    assert main(["offsets", "reset", "nobody", "--to-earliest", "--bootstrap-server", bootstrap]) == 1
    captured = capsys.readouterr()
    assert captured.err == "Error: Consumer group 'nobody' does not exist.\n"
    assert captured.out == ""


def test_resetting_an_unknown_topic_says_it_does_not_exist(
    group_broker: GroupBrokerHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    """Kafka's tool refuses partitions that do not exist; nothing is committed."""
    bootstrap = group_broker.bootstrap_servers
    command = ["offsets", "reset", "g", "--topic", "nosuch", "--to-offset", "3", "--execute"]
    assert main([*command, "--bootstrap-server", bootstrap]) == 1
    captured = capsys.readouterr()
    assert captured.err == "Error: Topic 'nosuch' does not exist.\n"
    assert captured.out == ""


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (["serve"], ["--override KEY=VALUE", "--log-level"]),  # serve.py owns its help text
        (["dump-log"], ["--offsets-decoder", "--print-data-log", "path"]),
        (["certs"], ["directory", "--client", "--host"]),
        (["groups", "list"], ["--bootstrap-server", "(default: 127.0.0.1:9092)"]),
        (["groups", "describe"], ["--bootstrap-server", "(default: 127.0.0.1:9092)"]),
        (["groups", "timeline"], ["--control", "(default: http://127.0.0.1:9644)", "--json"]),
        (["storage"], ["--control", "(default: http://127.0.0.1:9644)", "--json"]),
        (["nodes", "list"], ["--control", "(default: http://127.0.0.1:9644)", "--json"]),
        (["nodes", "move-leader"], ["topic", "partition", "node", "--control"]),
        (["nodes", "partition"], ["node", "--client-id", "--control"]),
        (
            ["offsets", "reset"],
            ["--bootstrap-server", "(default: 127.0.0.1:9092)", "--topic", "--to-offset", "--execute"],
        ),
    ],
)
def test_every_subcommands_help_lists_its_options_and_defaults(
    command: list[str], expected: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([*command, "--help"])
    assert exit_.value.code == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps to the terminal width
    for text in expected:
        assert text in out


@pytest.mark.parametrize(
    ("run", "usage"),
    [
        (lambda: main(["serve", "--help"]), "usage: group-broker serve "),
        (lambda: serve_main(["--help"]), "usage: server.py "),
    ],
    ids=["group-broker serve", "server.py"],
)
def test_the_serve_usage_line_says_what_the_user_typed(
    run: Callable[[], int], usage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        run()
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith(usage)
