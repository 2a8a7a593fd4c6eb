"""SCRAM users from the command line, the way Kafka's tools manage them.

* `group-broker configs --bootstrap-server H:P --entity-type users --entity-name alice --alter --add-config
  'SCRAM-SHA-512=[iterations=8192,password=alice-secret]'` (and `--delete-config SCRAM-SHA-512`, `--describe`), like
  `kafka-configs.sh`: a client of AlterUserScramCredentials / DescribeUserScramCredentials, so it works against
  Kafka too; the password is salted and hashed here and never sent.
* `group-broker scram add --log-dir DIR 'SCRAM-SHA-512=[name=alice,password=alice-secret]'`, like
  `kafka-storage.sh format --add-scram`: writes the credential store of a data directory that no broker is running
  on, so the first start already knows its users.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Sequence
from pathlib import Path

from broker.security.credential_store import ScramCredentialStore
from broker.security.scram import MECHANISMS, ScramMechanism
from broker.security.scram_admin import MECHANISM_CODES, Deletion, Upsertion, UserResult, plan_alterations
from broker.startup import lock_data_dir
from cli.kafka_client import KafkaClient, KafkaClientError
from protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    ScramCredentialDeletion,
    ScramCredentialUpsertion,
)
from protocol.messages.describe_user_scram_credentials import DescribeUserScramCredentialsRequest, UserName
from protocol.registry import ApiKey

__all__ = ["ScramSpec", "add_offline", "configs_command", "parse_spec"]

#: Kafka's tools' default (ConfigCommand and StorageTool): 4096 iterations when the spec names none.
DEFAULT_ITERATIONS = 4096
_SPEC = re.compile(r"(?P<mechanism>[A-Z0-9-]+)=\[(?P<fields>.*)\]")
_CODES = {mechanism.name: code for code, mechanism in MECHANISM_CODES.items()}


class ScramSpec:
    """One `MECHANISM=[key=value,...]` argument: the mechanism and its fields (`name`, `password`, `iterations`)."""

    def __init__(self, mechanism: ScramMechanism, fields: dict[str, str]) -> None:
        self.mechanism = mechanism
        self.fields = fields

    @property
    def iterations(self) -> int:
        text = self.fields.get("iterations", str(DEFAULT_ITERATIONS))
        if not text.isdigit():
            raise KafkaClientError(f"invalid iterations {text!r}: a number is expected")
        return int(text)

    def upsertion(self, user: str) -> Upsertion:
        """The salted credential for `user` (a fresh random salt): what AlterUserScramCredentials carries."""
        password = self.fields.get("password")
        if not password:
            raise KafkaClientError(f"{self.mechanism.name} needs a password: {self.mechanism.name}=[password=...]")
        salt, iterations = os.urandom(32), self.iterations
        salted = self.mechanism.salted_password(password, salt, iterations)
        return Upsertion(user, _CODES[self.mechanism.name], iterations, salt, salted)


def parse_spec(text: str) -> ScramSpec:
    """`SCRAM-SHA-512=[iterations=8192,password=alice-secret]`; a value may be double-quoted (to hold a comma)."""
    match = _SPEC.fullmatch(text.strip())
    if match is None or match["mechanism"] not in MECHANISMS:
        raise KafkaClientError(
            f"invalid SCRAM config {text!r}: expected MECHANISM=[key=value,...] with MECHANISM one of "
            f"{', '.join(MECHANISMS)}"
        )
    fields: dict[str, str] = {}
    for key, quoted, plain in re.findall(r'\s*([a-z]+)=(?:"((?:[^"\\]|\\.)*)"|([^,]*))\s*(?:,|$)', match["fields"]):
        fields[key] = quoted.replace('\\"', '"') if quoted else plain
    return ScramSpec(MECHANISMS[match["mechanism"]], fields)


def _failures(results: Sequence[UserResult]) -> list[str]:
    return [f"{r.user}: {r.error_message or r.error_code}" for r in results if r.error_code]


def configs_command(client: KafkaClient, args: argparse.Namespace) -> int:
    """`configs --entity-type users`: alter or describe SCRAM credentials over the wire; prints what Kafka's
    kafka-configs.sh prints."""
    if args.entity_type != "users":
        raise KafkaClientError("only --entity-type users (SCRAM credentials) is served by this command")
    if args.describe:
        users = None if args.entity_name is None else [UserName(name=args.entity_name)]
        _, answer = client.bootstrap.call(
            ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, DescribeUserScramCredentialsRequest(users=users)
        )
        if answer.error_code:
            raise KafkaClientError(f"DescribeUserScramCredentials: {answer.error_message or answer.error_code}")
        names = {code: mechanism.name for code, mechanism in MECHANISM_CODES.items()}
        for result in answer.results:
            if result.error_code:
                raise KafkaClientError(result.error_message or f"error {result.error_code}")
            configs = ", ".join(f"{names[c.mechanism]}=iterations={c.iterations}" for c in result.credential_infos)
            print(f"SCRAM credential configs for user-principal '{result.user}' are {configs}")
        return 0
    if args.entity_name is None:
        raise KafkaClientError("--alter needs --entity-name")
    upsertions = [parse_spec(text).upsertion(args.entity_name) for text in _split_configs(args.add_config)]
    deletions = [_deletion(args.entity_name, name) for name in _split_configs(args.delete_config)]
    if not upsertions and not deletions:
        raise KafkaClientError("--alter needs --add-config or --delete-config")
    # One request per change: Kafka's controller refuses a user named twice in one request (DUPLICATE_RESOURCE),
    # and both mechanisms of one user is what `--add-config 'SCRAM-SHA-256=[...],SCRAM-SHA-512=[...]'` asks.
    requests = [
        AlterUserScramCredentialsRequest(deletions=[ScramCredentialDeletion(name=d.name, mechanism=d.mechanism)])
        for d in deletions
    ] + [
        AlterUserScramCredentialsRequest(upsertions=[ScramCredentialUpsertion(
            name=u.name, mechanism=u.mechanism, iterations=u.iterations, salt=u.salt, salted_password=u.salted_password,
        )])
        for u in upsertions
    ]  # fmt: skip
    for request in requests:
        _, answer = client.bootstrap.call(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, request)
        failures = _failures([UserResult(r.user, r.error_code, r.error_message) for r in answer.results])
        if failures:
            raise KafkaClientError("; ".join(failures))
    print(f"Completed updating config for user {args.entity_name}.")
    return 0


def _split_configs(text: str | None) -> list[str]:
    """`--add-config 'SCRAM-SHA-256=[...],SCRAM-SHA-512=[...]'`: commas outside brackets separate entries."""
    if not text:
        return []
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [part.strip() for part in [*parts, current] if part.strip()]


def _deletion(user: str, mechanism: str) -> Deletion:
    if mechanism not in _CODES:
        raise KafkaClientError(f"invalid --delete-config {mechanism!r}: one of {', '.join(_CODES)}")
    return Deletion(user, _CODES[mechanism])


def add_offline(log_dir: Path, specs: Sequence[str]) -> tuple[list[str], list[str]]:
    """Write `name=...,password=...` credentials into `log_dir`'s store while no broker runs (its lock is taken, so a
    running broker refuses this). Returns the users written and the damaged files quarantined on the way (the store
    then starts empty, as the broker's would); KafkaClientError or StartupError otherwise."""
    parsed = [parse_spec(text) for text in specs]
    upsertions = []
    for spec in parsed:
        name = spec.fields.get("name")
        if not name:
            raise KafkaClientError(f"{spec.mechanism.name} needs a user: {spec.mechanism.name}=[name=...,password=...]")
        upsertions.append(spec.upsertion(name))
    lock = lock_data_dir(log_dir)
    try:
        store = ScramCredentialStore(log_dir)
        for upsertion in upsertions:  # one at a time: a user may get both mechanisms
            plan = plan_alterations([], [upsertion], store.exists)
            failures = _failures(plan.results)
            if failures:
                raise KafkaClientError("; ".join(failures))
            store.apply(plan)
    finally:
        lock.release()
    return [u.name for u in upsertions], [f"{q.original} -> {q.moved_to} ({q.reason})" for q in store.quarantined]
