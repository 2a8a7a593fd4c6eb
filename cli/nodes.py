"""`group-broker nodes ...`: the nodes of a several-node broker (`cluster.nodes`), through its control API.

List the nodes, stop and start one, move a partition's leadership or a group's coordinator, and cut a node off from
one client (a network partition: the node holds that client's requests unanswered) and heal it. Kafka has no tool
for these (a real cluster's nodes are separate processes, stopped by whoever runs them; leadership moves by
`kafka-reassign-partitions.sh` and preferred elections), so the commands are group-broker's own and speak to its
control API: each prints what changed, or with `--json` the control API's answer.
"""

from __future__ import annotations

import argparse
import json
import urllib.parse
from collections.abc import Callable
from typing import Any

from cli.control_http import control_request
from cli.transactions import table

NODES_HEADERS = ["NodeId", "Port", "Running", "PartitionsLed", "Controller"]
CHANGES_HEADERS = ["Topic", "Partition", "LeaderBefore", "Leader"]
HEALED_HEADERS = ["NodeId", "ClientId", "RequestsHeld"]


_NODE = ("node", {"type": int, "help": "the node id"})
#: Each subcommand: its name, its help line, its arguments (name or flag, `add_argument`'s keywords).
SUBCOMMANDS: list[tuple[str, str, list[tuple[str, dict[str, Any]]]]] = [
    ("list", "every node: port, running, partitions led", []),
    ("stop", "stop a node: its connections drop, its partitions and coordinators move", [_NODE]),
    ("start", "start a stopped node again on the same port", [_NODE]),
    (
        "move-leader",
        "move one partition's leadership to a running in-sync replica",
        [
            ("topic", {"help": "the topic"}),
            ("partition", {"type": int, "help": "the partition"}),
            ("node", {"type": int, "help": "the node id to lead it"}),
        ],
    ),
    (
        "move-coordinator",
        "move a group's coordinator (its __consumer_offsets partition)",
        [("group", {"help": "the group id"}), ("node", {"type": int, "help": "the node id to coordinate it"})],
    ),
    (
        "partition",
        "cut a node off from one client: it holds that client's requests unanswered",
        [_NODE, ("--client-id", {"required": True, "help": "the client id whose requests the node holds"})],
    ),
    (
        "heal",
        "end node partitions (all by default): held requests are answered",
        [
            ("--node", {"type": int, "help": "only this node's partitions"}),
            ("--client-id", {"help": "only this client id's partitions"}),
        ],
    ),
]


def add_parser(
    commands: Any, formatter: type[argparse.HelpFormatter], control_options: Callable[[argparse.ArgumentParser], None]
) -> None:
    """The `nodes` command and its subcommands, under `commands` (the CLI's subparsers)."""
    nodes = commands.add_parser(
        "nodes", help="the nodes of a several-node broker (group-broker control API)", formatter_class=formatter
    ).add_subparsers(dest="nodes_command", required=True)
    for name, what, arguments in SUBCOMMANDS:
        command = nodes.add_parser(name, help=what, formatter_class=formatter)
        for argument, options in arguments:
            command.add_argument(argument, **options)
        control_options(command)


def _quoted(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def _call(args: argparse.Namespace) -> tuple[str, str, dict[str, Any] | None]:
    """The control API call a `nodes` subcommand makes: (method, path, JSON body)."""
    command = args.nodes_command
    if command == "list":
        return "GET", "/nodes", None
    if command in ("stop", "start"):
        return "POST", f"/nodes/{args.node}/{command}", None
    if command == "move-leader":
        return "POST", f"/topics/{_quoted(args.topic)}/partitions/{args.partition}/leader", {"node_id": args.node}
    if command == "move-coordinator":
        return "POST", f"/groups/{_quoted(args.group)}/coordinator", {"node_id": args.node}
    if command == "partition":
        return "POST", f"/nodes/{args.node}/partition", {"client_id": args.client_id}
    return "POST", "/nodes/partitions/heal", {"node_id": args.node, "client_id": args.client_id}


def _render(command: str, answer: dict[str, Any]) -> str:
    """The answer as the operator reads it: a table of nodes, of leader changes, or of partitions ended."""
    if command == "list":
        rows = [
            [
                str(n["node_id"]),
                str(n["port"]),
                str(n["running"]).lower(),
                str(n["leads"]),
                str(n["controller"]).lower(),
            ]
            for n in answer["nodes"]
        ]
        return table(NODES_HEADERS, rows)
    if command == "partition":
        already = "" if answer["new"] else " (it already was)"
        return f"Node {answer['node_id']} is cut off from client {answer['client_id']}{already}.\n"
    if command == "heal":
        if not answer["healed"]:
            return "No node partition to heal.\n"
        healed = [[str(c["node_id"]), c["client_id"], str(c["held_total"])] for c in answer["healed"]]
        return table(HEALED_HEADERS, healed)
    changes = answer["leader_changes"]
    if not changes:
        return "No leader changed.\n"
    rows = [[c["topic"], str(c["partition"]), str(c["leader_before"]), str(c["leader"])] for c in changes]
    return table(CHANGES_HEADERS, rows)


def run(args: argparse.Namespace) -> int:
    """Make the subcommand's control API call and print its answer."""
    method, path, body = _call(args)
    url = f"{args.control.rstrip('/')}{path}"
    with control_request(args.control, url, args.control_token, method=method, body=body) as response:
        answer = json.loads(response.read())
    print(
        json.dumps(answer, indent=2) if args.json else _render(args.nodes_command, answer),
        end="\n" if args.json else "",
    )
    return 0
