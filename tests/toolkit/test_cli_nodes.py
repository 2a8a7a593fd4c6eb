"""`group-broker nodes ...` (issue #19): each subcommand's control API call, then the commands against a three-node
broker's control API: list, stop and start a node, move a leader and a group's coordinator, partition and heal."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
import structlog

from cli.main import _parser, main
from cli.nodes import _call
from toolkit.embedded import EmbeddedBroker


@pytest.mark.parametrize(
    ("argv", "call"),
    [
        (["list"], ("GET", "/nodes", None)),
        (["stop", "2"], ("POST", "/nodes/2/stop", None)),
        (["start", "2"], ("POST", "/nodes/2/start", None)),
        (["move-leader", "orders", "1", "3"], ("POST", "/topics/orders/partitions/1/leader", {"node_id": 3})),
        (["move-coordinator", "team/billing", "3"], ("POST", "/groups/team%2Fbilling/coordinator", {"node_id": 3})),
        (["partition", "1", "--client-id", "app"], ("POST", "/nodes/1/partition", {"client_id": "app"})),
        (["heal"], ("POST", "/nodes/partitions/heal", {"node_id": None, "client_id": None})),
        (["heal", "--node", "1"], ("POST", "/nodes/partitions/heal", {"node_id": 1, "client_id": None})),
    ],
)
def test_each_subcommand_is_one_control_api_call(argv: list[str], call: tuple[str, str, Any]) -> None:
    assert _call(_parser().parse_args(["nodes", *argv])) == call


def test_a_node_id_must_be_a_number(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["nodes", "stop", "two"])
    assert exit_.value.code == 2
    assert "invalid int value: 'two'" in capsys.readouterr().err


@pytest.fixture
def control() -> Iterator[str]:
    """A three-node broker with its control API; yields the control URL. Its log lines are captured, not printed:
    the broker runs in this process, and where structlog prints depends on what earlier tests configured (stdout,
    which the commands' output is read from, when one left it configured with structlog's defaults)."""
    with structlog.testing.capture_logs():
        broker = EmbeddedBroker(
            {"cluster.nodes": "3", "default.replication.factor": "3", "control.listener": "http://127.0.0.1:0"}
        ).start()
        try:
            assert broker.control_url is not None
            broker.call(lambda: broker.kit.broker.create_topic("orders", 3, {}))
            yield broker.control_url
        finally:
            broker.stop()


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> list[list[str]]:
    """Run `group-broker nodes ...`; its output split in rows of columns."""
    assert main(["nodes", *argv]) == 0, capsys.readouterr().err
    return [line.split() for line in capsys.readouterr().out.splitlines()]


def test_nodes_are_listed_stopped_started_and_their_leaders_moved(
    control: str, capsys: pytest.CaptureFixture[str]
) -> None:
    c = ("--control", control)
    assert _run(capsys, "list", *c) == [
        ["NodeId", "Port", "Running", "PartitionsLed", "Controller"],
        *[[str(node), port, "true", leads, "true" if node == 1 else "false"] for node, port, leads in _led(control)],
    ]
    stopped = _run(capsys, "stop", "2", *c)
    assert stopped[0] == ["Topic", "Partition", "LeaderBefore", "Leader"]
    assert {row[2] for row in stopped[1:]} == {"2"} and "2" not in {row[3] for row in stopped[1:]}
    assert [row[2] for row in _run(capsys, "list", *c)[1:]] == ["true", "false", "true"]
    assert _run(capsys, "start", "2", *c) == [["No", "leader", "changed."]]  # back in sync, leading nothing
    assert _run(capsys, "move-leader", "orders", "0", "2", *c)[1] == ["orders", "0", "1", "2"]
    _run(capsys, "move-coordinator", "billing", "3", *c)  # wherever it was, it is on node 3 now
    [_, [topic, _, before, after]] = _run(capsys, "move-coordinator", "billing", "1", *c)
    assert (topic, before, after) == ("__consumer_offsets", "3", "1")
    assert main(["nodes", "stop", "7", *c]) == 1
    assert "answered 400: no node 7" in capsys.readouterr().err


def test_a_node_is_partitioned_from_a_client_and_healed(control: str, capsys: pytest.CaptureFixture[str]) -> None:
    c = ("--control", control)
    assert _run(capsys, "partition", "1", "--client-id", "app", *c) == [
        ["Node", "1", "is", "cut", "off", "from", "client", "app."]
    ]
    assert _run(capsys, "heal", "--client-id", "other", *c) == [["No", "node", "partition", "to", "heal."]]
    assert _run(capsys, "heal", *c) == [["NodeId", "ClientId", "RequestsHeld"], ["1", "app", "0"]]


def _led(control: str) -> list[tuple[int, str, str]]:
    """(node id, port, partitions led) per node, as the control API answers them."""
    with urllib.request.urlopen(f"{control}/nodes", timeout=10) as answer:
        return [(n["node_id"], str(n["port"]), str(n["leads"])) for n in json.loads(answer.read())["nodes"]]
