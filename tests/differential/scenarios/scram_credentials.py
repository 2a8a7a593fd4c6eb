"""SCRAM credential administration (AlterUserScramCredentials and DescribeUserScramCredentials v0), answered by
both brokers: upserts, Kafka's refusals (iterations out of bounds, unknown mechanism, empty name, a user twice, a
deletion of nothing), and descriptions of all users, named users, unknown and repeated ones."""

from __future__ import annotations

import time
from typing import Any

from protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    ScramCredentialDeletion,
    ScramCredentialUpsertion,
)
from protocol.messages.describe_user_scram_credentials import DescribeUserScramCredentialsRequest, UserName
from protocol.registry import ApiKey
from tests.differential.normalize import plain
from tests.differential.registry import scenario
from tests.differential.scenarios.group_state import ask
from tests.differential.session import Session

SHA_256, SHA_512 = 1, 2
SALT = b"differential-salt"


def by_user(results: list[Any]) -> list[Any]:
    """Results sorted by user: Kafka answers in its HashMap's order (the user names' hashes), not request order."""
    return sorted((plain(r) for r in results), key=lambda r: str(r["user"]))


def _upsert(name: str, mechanism: int = SHA_512, iterations: int = 4096) -> ScramCredentialUpsertion:
    return ScramCredentialUpsertion(
        name=name, mechanism=mechanism, iterations=iterations, salt=SALT, salted_password=b"\x01" * 64
    )


@scenario("AlterUserScramCredentials and DescribeUserScramCredentials v0")
async def scram_credentials_are_altered_and_described(s: Session) -> None:
    """Credentials set, refused, described and deleted as Kafka's controller decides; users are named per run."""
    conn = await s.connect()
    alice, bob, nobody = s.name("alice"), s.name("bob"), s.name("nobody")

    async def alter(step: str, **body: object) -> None:
        answer = await ask(conn, ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, AlterUserScramCredentialsRequest(**body))
        s.note(step, {"closed": True} if answer is None else by_user(answer.results))

    async def described(users: list[str]) -> Any:
        request = DescribeUserScramCredentialsRequest(users=[UserName(name=u) for u in users])
        return await ask(conn, ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, request)

    async def describe(step: str, users: list[str]) -> None:
        answer = await described(users)
        s.note(step, {"closed": True} if answer is None else plain(answer) | {"results": by_user(answer.results)})

    async def settled(users: list[str], known: bool, window_s: float = 10.0) -> None:
        """Kafka answers AlterUserScramCredentials once its controller committed the change; the broker's metadata
        image, which DescribeUserScramCredentials reads, may lag a moment behind. Wait (without noting) until each
        user is described as `known` or not, as a client that retries would."""
        deadline = time.monotonic() + window_s
        while time.monotonic() < deadline:
            answer = await described(users)
            if answer is None or all((r.error_code == 0) == known for r in answer.results):
                return
            await s.sleep_ms(50)

    await alter("upsert two mechanisms for two users", upsertions=[_upsert(alice), _upsert(bob, SHA_256, 8192)])
    await alter(
        "refusals",
        upsertions=[
            _upsert(s.name("few"), iterations=4095),
            _upsert(s.name("many"), iterations=16385),
            _upsert(s.name("unknown-mechanism"), mechanism=7),
            _upsert(""),
        ],
        deletions=[ScramCredentialDeletion(name=nobody, mechanism=SHA_512)],
    )
    await alter("one user twice", upsertions=[_upsert(bob), _upsert(bob, SHA_256)])
    await settled([alice, bob], known=True)
    await describe("named users, one unknown", [alice, bob, nobody])
    await describe("a user named twice", [alice, alice])
    await alter("delete", deletions=[ScramCredentialDeletion(name=alice, mechanism=SHA_512)])
    await settled([alice], known=False)
    await describe("the deleted user", [alice])
