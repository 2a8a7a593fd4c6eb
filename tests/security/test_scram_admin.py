"""AlterUserScramCredentials / DescribeUserScramCredentials decisions with Kafka's error codes and messages."""

from __future__ import annotations

from broker.security.scram import SCRAM_SHA_256, SCRAM_SHA_512, ScramCredential, ScramMechanism
from broker.security.scram_admin import (
    Deletion,
    DescribeResult,
    Upsertion,
    UserResult,
    describe_users,
    plan_alterations,
)

DUPLICATE = (92, "A user credential cannot be altered twice in the same request")


def _up(name: str, code: int = 1, iterations: int = 4096) -> Upsertion:
    return Upsertion(name, code, iterations, b"salt", b"\x01" * 32)


def test_valid_upsertions_and_deletions_are_planned_with_their_credentials() -> None:
    plan = plan_alterations(
        [Deletion("old", 2)], [_up("alice"), _up("bob", 2, 16384)], lambda u, m: (u, m.name) == ("old", "SCRAM-SHA-512")
    )
    assert plan.deletions == [("old", SCRAM_SHA_512)]
    assert [(u, m) for u, m, _ in plan.upsertions] == [("alice", SCRAM_SHA_256), ("bob", SCRAM_SHA_512)]
    assert plan.upsertions[0][2] == SCRAM_SHA_256.credential_from_salted_password(b"\x01" * 32, b"salt", 4096)
    assert plan.results == [UserResult("old"), UserResult("alice"), UserResult("bob")]


def _errors(deletions: list[Deletion], upsertions: list[Upsertion], exists: bool = True) -> dict[str, tuple[int, str]]:
    plan = plan_alterations(deletions, upsertions, lambda user, mechanism: exists)
    return {r.user: (r.error_code, r.error_message or "") for r in plan.results if r.error_code}


def test_kafkas_refusals() -> None:
    assert _errors([], [_up("")]) == {"": (93, "Username must not be empty")}
    assert _errors([], [_up("a", code=0)]) == {"a": (33, "Unknown SCRAM mechanism")}
    assert _errors([], [_up("a", code=3)]) == {"a": (33, "Unknown SCRAM mechanism")}
    assert _errors([], [_up("a", iterations=4095)]) == {"a": (93, "Too few iterations")}
    assert _errors([], [_up("a", iterations=16385)]) == {"a": (93, "Too many iterations")}
    assert _errors([Deletion("a", 1)], [], exists=False) == {
        "a": (91, "Attempt to delete a user credential that does not exist")
    }
    assert _errors([Deletion("", 1)], []) == {"": (93, "Username must not be empty")}
    assert _errors([Deletion("a", 9)], []) == {"a": (33, "Unknown SCRAM mechanism")}


def test_a_user_altered_twice_fails_whole_with_duplicate_resource() -> None:
    plan = plan_alterations([Deletion("a", 1)], [_up("a", 2), _up("b")], lambda u, m: True)
    assert plan.deletions == []
    assert [u for u, _, _ in plan.upsertions] == ["b"]
    assert plan.results == [UserResult("b"), UserResult("a", *DUPLICATE)]
    assert _errors([], [_up("a"), _up("a", 2), _up("a")]) == {"a": DUPLICATE}
    assert _errors([Deletion("a", 1), Deletion("a", 2)], []) == {"a": DUPLICATE}


def test_a_user_that_already_failed_is_not_reconsidered() -> None:
    assert _errors([], [_up("a", iterations=1), _up("a")]) == {"a": (93, "Too few iterations")}


def _cred(mechanism: ScramMechanism, iterations: int) -> ScramCredential:
    return mechanism.credential("pw", b"s", iterations)


STORED = {
    "alice": {"SCRAM-SHA-512": _cred(SCRAM_SHA_512, 8192), "SCRAM-SHA-256": _cred(SCRAM_SHA_256, 4096)},
    "bob": {"SCRAM-SHA-256": _cred(SCRAM_SHA_256, 4096)},
}


def test_describing_no_users_lists_everyone_with_credentials() -> None:
    expected = [
        DescribeResult("alice", credentials=((1, 4096), (2, 8192))),
        DescribeResult("bob", credentials=((1, 4096),)),
    ]
    assert describe_users(None, STORED) == expected
    assert describe_users([], STORED) == expected


def test_describing_named_users_reports_unknown_and_duplicate_names() -> None:
    assert describe_users(["bob", "carol", "alice", "alice"], STORED) == [
        DescribeResult("bob", credentials=((1, 4096),)),
        DescribeResult("carol", 91, "Attempt to describe a user credential that does not exist: carol"),
        DescribeResult(
            "alice", 92, "Cannot describe SCRAM credentials for the same user twice in a single request: alice"
        ),
    ]
