"""`group-broker`: serve, look after consumer groups the way `kafka-consumer-groups.sh` does, and transactions the
way `kafka-transactions.sh` does.

Group and transaction commands speak the Kafka protocol, so they work against any Kafka-compatible broker;
`groups timeline`, `transactions timeline`, `nodes` and `storage` use group-broker's control API, which only
group-broker has.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from broker.startup import StartupError
from broker.storage_status import format_storage_status
from cli import nodes as nodes_cli
from cli import startup_imports
from cli.client_security import read_command_config
from cli.control_http import CONTROL_TOKEN_VARIABLE, CliError
from cli.control_http import control_request as _control_get
from cli.describe_format import format_describe, format_group_list, format_members, format_reset, format_state
from cli.group_describe import GroupDescription, describe
from cli.kafka_client import Connection, KafkaClient, KafkaClientError
from cli.scram import add_offline, configs_command
from cli.transactions import DESCRIBE_HEADERS, LIST_HEADERS, describe_row, list_rows, table
from protocol.errors import ErrorCode
from protocol.messages.list_groups import ListGroupsRequest
from protocol.messages.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from protocol.messages.offset_fetch import OffsetFetchRequest
from protocol.registry import ApiKey

LATEST = -1
EARLIEST = -2


@dataclass(frozen=True, slots=True)
class DescribeRow:
    group: str
    topic: str
    partition: int
    current_offset: int | None
    log_end_offset: int | None
    consumer_id: str
    host: str
    client_id: str

    @property
    def lag(self) -> int | None:
        if self.current_offset is None or self.log_end_offset is None:
            return None
        return self.log_end_offset - self.current_offset


def _check(error: int, what: str) -> None:
    if error != ErrorCode.NONE:
        raise KafkaClientError(f"{what}: {ErrorCode(error).name}")


def _leaders(client: KafkaClient, topics: Sequence[str]) -> dict[tuple[str, int], tuple[str, int]]:
    """(topic, partition) -> leader (host, port), from Metadata."""
    request = MetadataRequest(topics=[MetadataRequestTopic(name=t) for t in topics], allow_auto_topic_creation=False)
    _, response = client.bootstrap.call(ApiKey.METADATA, request)
    nodes = {b.node_id: (b.host, b.port) for b in response.brokers}
    return {
        (t.name, p.partition_index): nodes[p.leader_id]
        for t in response.topics
        if t.error_code == ErrorCode.NONE and t.name
        for p in t.partitions
        if p.leader_id in nodes
    }


def list_offsets(
    client: KafkaClient, partitions: Sequence[tuple[str, int]], timestamp: int
) -> dict[tuple[str, int], int]:
    leaders = _leaders(client, sorted({t for t, _ in partitions}))
    by_leader: dict[tuple[str, int], list[tuple[str, int]]] = {}
    for tp in partitions:
        if tp in leaders:
            by_leader.setdefault(leaders[tp], []).append(tp)
    found: dict[tuple[str, int], int] = {}
    for (host, port), tps in by_leader.items():
        connection = Connection(host, port)
        try:
            topics: dict[str, list[ListOffsetsPartition]] = {}
            for topic, partition in tps:
                topics.setdefault(topic, []).append(
                    ListOffsetsPartition(partition_index=partition, timestamp=timestamp)
                )
            request = ListOffsetsRequest(
                replica_id=-1, topics=[ListOffsetsTopic(name=t, partitions=ps) for t, ps in topics.items()]
            )
            _, response = connection.call(ApiKey.LIST_OFFSETS, request)
            for topic_response in response.topics:
                for p in topic_response.partitions:
                    if p.error_code == ErrorCode.NONE:
                        found[(topic_response.name, p.partition_index)] = p.offset
        finally:
            connection.close()
    return found


def describe_group(client: KafkaClient, group_id: str) -> tuple[GroupDescription, list[DescribeRow]]:
    group = describe(client, group_id)
    owners: dict[tuple[str, int], tuple[str, str, str]] = {}
    for member in group.members:
        for topic, indexes in member.assignment.items():
            for partition in indexes:
                owners[(topic, partition)] = (member.consumer_id, member.host, member.client_id)
    coordinator = client.coordinator(group_id)
    _, fetched = coordinator.call(ApiKey.OFFSET_FETCH, OffsetFetchRequest(group_id=group_id, topics=None))
    _check(fetched.error_code, f"OffsetFetch {group_id}")
    committed = {
        (t.name, p.partition_index): p.committed_offset
        for t in fetched.topics
        for p in t.partitions
        if p.committed_offset >= 0
    }
    partitions = sorted(set(committed) | set(owners))
    ends = list_offsets(client, partitions, LATEST)
    rows = [
        DescribeRow(
            group_id,
            topic,
            partition,
            committed.get((topic, partition)),
            ends.get((topic, partition)),
            *owners.get((topic, partition), ("-", "-", "-")),
        )
        for topic, partition in partitions
    ]
    return group, rows


def reset_offsets(
    client: KafkaClient, group_id: str, target: str, offset: int | None, topic: str | None, execute: bool
) -> list[tuple[str, int, int]]:
    """Kafka's rules: only an Empty (or unknown) group may be reset; without --execute it is a dry run.

    An unknown group may be given offsets for a named topic (as Kafka's tool allows, to start a new group at
    chosen offsets); without --topic it has nothing to reset and is refused, as is a topic that does not exist."""
    group, rows = describe_group(client, group_id)
    if group.state not in ("Empty", "Dead"):
        raise KafkaClientError(
            f"Assignments can only be reset if the group '{group_id}' is inactive, "
            f"but the current state is {group.state}."
        )
    partitions = sorted({(r.topic, r.partition) for r in rows if topic is None or r.topic == topic})
    if topic is None and group.state == "Dead":  # the coordinator does not know it: nothing to reset
        raise KafkaClientError(f"Consumer group '{group_id}' does not exist.")
    if topic is not None and not partitions:  # Kafka resets every partition of a named topic, committed or not
        partitions = sorted(tp for tp in _leaders(client, [topic]) if tp[0] == topic)
        if not partitions:
            raise KafkaClientError(f"Topic '{topic}' does not exist.")
    if target == "offset":
        assert offset is not None
        plan = {tp: offset for tp in partitions}
    else:
        plan = list_offsets(client, partitions, EARLIEST if target == "earliest" else LATEST)
    if execute and plan:
        topics: dict[str, list[OffsetCommitRequestPartition]] = {}
        for (name, partition), value in sorted(plan.items()):
            topics.setdefault(name, []).append(
                OffsetCommitRequestPartition(partition_index=partition, committed_offset=value)
            )
        request = OffsetCommitRequest(
            group_id=group_id,
            generation_id_or_member_epoch=-1,
            topics=[OffsetCommitRequestTopic(name=n, partitions=ps) for n, ps in topics.items()],
        )
        _, response = client.coordinator(group_id).call(ApiKey.OFFSET_COMMIT, request)
        for t in response.topics:
            for p in t.partitions:
                _check(p.error_code, f"OffsetCommit {t.name}-{p.partition_index}")
    return [(t, p, o) for (t, p), o in sorted(plan.items())]


BOOTSTRAP_DEFAULT = "127.0.0.1:9092"
CONTROL_DEFAULT = "http://127.0.0.1:9644"
_HELP = argparse.ArgumentDefaultsHelpFormatter  # every option's help ends with its default, as Kafka's tools list


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="group-broker", description=__doc__, formatter_class=_HELP)
    commands = parser.add_subparsers(dest="command", required=True)
    # `serve` and `dump-log` have their own parsers (see main); these entries only list them in `--help`
    commands.add_parser("serve", help="run the broker (same as python server.py); serve --help for its options")
    commands.add_parser("dump-log", help="print a log segment, like kafka-dump-log.sh; dump-log --help for options")
    commands.add_parser("certs", help="write a CA, a broker and a client certificate for TLS; certs --help")

    groups = commands.add_parser("groups", help="consumer groups", formatter_class=_HELP).add_subparsers(
        dest="groups_command", required=True
    )
    listing = groups.add_parser("list", help="list the groups, like --list", formatter_class=_HELP)
    _bootstrap_option(listing)
    listing.add_argument("--type", action="store_true", help="add each group's type (classic, consumer)")
    listing.add_argument("--state", action="store_true", help="add each group's state")
    describing = groups.add_parser("describe", help="a group's offsets and lag", formatter_class=_HELP)
    describing.add_argument("group", help="the group id")
    _bootstrap_option(describing)
    view = describing.add_mutually_exclusive_group()
    view.add_argument("--members", action="store_true", help="the members and their partition counts")
    view.add_argument("--state", action="store_true", help="coordinator, assignment strategy, state, #members")
    describing.add_argument(
        "--verbose", action="store_true", help="with --members: epochs and assignments; with --state: epochs"
    )
    timeline = groups.add_parser(
        "timeline", help="the group's rebalance timeline (group-broker control API)", formatter_class=_HELP
    )
    timeline.add_argument("group", help="the group id")
    _control_options(timeline)

    transactions = commands.add_parser(
        "transactions", help="transactions, like kafka-transactions.sh", formatter_class=_HELP
    ).add_subparsers(dest="transactions_command", required=True)
    txn_list = transactions.add_parser(
        "list", help="every transactional id: coordinator, producer id, state", formatter_class=_HELP
    )
    _bootstrap_option(txn_list)
    txn_describe = transactions.add_parser(
        "describe", help="the state of a transactional id, as DescribeTransactions answers", formatter_class=_HELP
    )
    _bootstrap_option(txn_describe)
    txn_describe.add_argument("--transactional-id", required=True, help="the transactional id")
    txn_timeline = transactions.add_parser(
        "timeline", help="the transaction timeline of an id (group-broker control API)", formatter_class=_HELP
    )
    txn_timeline.add_argument("--transactional-id", required=True, help="the transactional id")
    _control_options(txn_timeline)

    configs = commands.add_parser(
        "configs", help="SCRAM users, like kafka-configs.sh --entity-type users", formatter_class=_HELP
    )
    _bootstrap_option(configs)
    action = configs.add_mutually_exclusive_group(required=True)
    action.add_argument("--alter", action="store_true", help="set (--add-config) or remove (--delete-config)")
    action.add_argument("--describe", action="store_true", help="list the user's (or every user's) mechanisms")
    configs.add_argument("--entity-type", required=True, choices=["users"], help="what to configure")
    configs.add_argument("--entity-name", help="the user name (all users for --describe without it)")
    configs.add_argument(
        "--add-config", metavar="SPEC", help="e.g. 'SCRAM-SHA-512=[iterations=8192,password=alice-secret]'"
    )
    configs.add_argument("--delete-config", metavar="MECHANISMS", help="e.g. SCRAM-SHA-512 (comma separated)")

    scram = commands.add_parser(
        "scram",
        help="seed SCRAM users before the first start, like kafka-storage.sh --add-scram",
        formatter_class=_HELP,
    ).add_subparsers(dest="scram_command", required=True)
    scram_add = scram.add_parser(
        "add", help="write users into a data directory no broker runs on", formatter_class=_HELP
    )
    scram_add.add_argument("--log-dir", required=True, type=Path, help="the broker's log.dirs (first entry)")
    scram_add.add_argument(
        "--add-scram", required=True, action="append", metavar="SPEC",
        help="'SCRAM-SHA-512=[name=alice,password=alice-secret]' (repeatable; iterations=N optional, default 4096)",
    )  # fmt: skip

    nodes_cli.add_parser(commands, _HELP, _control_options)

    storage = commands.add_parser(
        "storage", help="damaged data and __consumer_offsets loading (group-broker control API)", formatter_class=_HELP
    )
    _control_options(storage)

    offsets = commands.add_parser("offsets", help="committed offsets", formatter_class=_HELP).add_subparsers(
        dest="offsets_command", required=True
    )
    reset = offsets.add_parser("reset", help="reset an inactive group's committed offsets", formatter_class=_HELP)
    reset.add_argument("group", help="the group id (an Empty group, or an unknown one with --topic)")
    _bootstrap_option(reset)
    reset.add_argument("--topic", help="reset every partition of this topic (default: the group's committed ones)")
    target = reset.add_mutually_exclusive_group(required=True)
    target.add_argument("--to-earliest", action="store_true", help="each partition's log start offset")
    target.add_argument("--to-latest", action="store_true", help="each partition's log end offset")
    target.add_argument("--to-offset", type=int, metavar="OFFSET", help="this offset in every partition")
    reset.add_argument("--execute", action="store_true", help="commit the new offsets; without it, a dry run")
    return parser


def _bootstrap_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bootstrap-server", default=BOOTSTRAP_DEFAULT, help="a broker to ask, host:port")
    parser.add_argument(
        "--command-config",
        type=Path,
        help="client properties for a secured listener, as Kafka's tools take them (security.protocol, "
        "sasl.mechanism, sasl.jaas.config, ssl.truststore.location)",
    )


def _control_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--control", default=CONTROL_DEFAULT, help="the broker's control.listener URL")
    parser.add_argument(
        "--control-token",
        help=f"the broker's control.listener.token, when it has one (None: ${CONTROL_TOKEN_VARIABLE}, if set)",
    )
    parser.add_argument("--json", action="store_true", help="print the JSON the control API answers")


def _delegated(argv: Sequence[str]) -> int | None:
    """`serve`, `dump-log` and `certs` parse their own arguments (their --help lists their options): hand them over."""
    if argv and argv[0] == "serve":
        startup_imports.begin()  # as server.py does; serve_main settles
        from cli.serve import main as serve_main

        return serve_main(list(argv[1:]), prog="group-broker serve")
    if argv and argv[0] == "dump-log":
        from storage import dump

        return int(dump.main(argv[1:], prog="group-broker dump-log") or 0)
    if argv and argv[0] == "certs":
        from cli.certs import main as certs_main

        return certs_main(list(argv[1:]))
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    delegated = _delegated(argv)
    if delegated is not None:
        return delegated
    args = _parser().parse_args(argv)
    if hasattr(args, "control_token"):  # read here, not as the option's default: --help would show it
        args.control_token = args.control_token or os.environ.get(CONTROL_TOKEN_VARIABLE)
    try:
        if args.command == "groups" and args.groups_command == "timeline":
            fmt = "json" if args.json else "text"
            url = f"{args.control.rstrip('/')}/groups/{args.group}/timeline?format={fmt}"
            with _control_get(args.control, url, args.control_token) as response:
                print(response.read().decode())
            return 0
        if args.command == "transactions" and args.transactions_command == "timeline":
            fmt = "json" if args.json else "text"
            quoted = urllib.parse.quote(args.transactional_id, safe="")
            url = f"{args.control.rstrip('/')}/transactions/{quoted}/timeline?format={fmt}"
            with _control_get(args.control, url, args.control_token) as response:
                print(response.read().decode())
            return 0
        if args.command == "nodes":
            return nodes_cli.run(args)
        if args.command == "storage":
            return _storage_command(args.control, args.control_token, as_json=args.json)
        if args.command == "scram":
            return _scram_add(args.log_dir, args.add_scram)
    except (CliError, KafkaClientError, StartupError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    try:
        security = read_command_config(args.command_config) if args.command_config else None
        client = KafkaClient(args.bootstrap_server, security)
        try:
            return _run_wire_command(client, args)
        finally:
            client.close()
    except KafkaClientError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        reason = exc.strerror or str(exc)
        print(
            f"Error: cannot reach the broker at {args.bootstrap_server} (--bootstrap-server): {reason}.",
            file=sys.stderr,
        )
        return 1


def _storage_command(control: str, token: str | None, *, as_json: bool) -> int:
    """Print `GET /storage`; exit 1 when a partition failed to load, so scripts notice."""
    with _control_get(control, f"{control.rstrip('/')}/storage", token) as response:
        status = json.loads(response.read())
    print(json.dumps(status, indent=2) if as_json else format_storage_status(status), end="\n" if as_json else "")
    return 1 if any(p["state"] == "failed" for p in status["offsets_partitions"]) else 0


def _scram_add(log_dir: Path, specs: list[str]) -> int:
    users, quarantined = add_offline(log_dir, specs)
    for line in quarantined:
        print(f"Warning: a damaged SCRAM credentials file was quarantined: {line}", file=sys.stderr)
    for user in users:
        print(f"Added SCRAM credentials for user {user} in {log_dir}.")
    return 0


def _run_wire_command(client: KafkaClient, args: argparse.Namespace) -> int:
    if args.command == "configs":
        return configs_command(client, args)
    if args.command == "transactions":
        if args.transactions_command == "list":
            print(table(LIST_HEADERS, list_rows(client)), end="")
        else:
            row = describe_row(client, args.transactional_id, lambda: int(time.time() * 1000))
            print(table(DESCRIBE_HEADERS, [row]), end="")
        return 0
    if args.command == "groups" and args.groups_command == "list":
        _, response = client.bootstrap.call(ApiKey.LIST_GROUPS, ListGroupsRequest())
        _check(response.error_code, "ListGroups")
        listed = sorted(response.groups, key=lambda g: g.group_id)
        if args.type or args.state:
            print(format_group_list(listed, with_type=args.type, with_state=args.state), end="")
        else:
            for group in listed:
                print(group.group_id)
        return 0
    if args.command == "groups" and args.groups_command == "describe":
        group, rows = describe_group(client, args.group)
        if group.state == "Dead":  # what DescribeGroups answers for a group the coordinator does not know
            raise KafkaClientError(f"Consumer group '{args.group}' does not exist.")
        if args.members:
            print(format_members(group, verbose=args.verbose), end="")
        elif args.state:
            print(format_state(group, verbose=args.verbose), end="")
        else:
            print(f"Consumer group '{args.group}' is {group.state} with {len(group.members)} member(s).\n")
            print(format_describe([dataclasses.asdict(r) | {"lag": r.lag} for r in rows]), end="")
        return 0
    target = "earliest" if args.to_earliest else "latest" if args.to_latest else "offset"
    plan = reset_offsets(client, args.group, target, args.to_offset, args.topic, args.execute)
    print(
        format_reset([{"group": args.group, "topic": t, "partition": p, "new_offset": o} for t, p, o in plan]), end=""
    )
    if not args.execute:
        print("Dry run: nothing committed (add --execute).", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
