"""What AlterUserScramCredentials and DescribeUserScramCredentials decide, as Kafka's controller decides it.

Pure functions over the request's entries and the credentials that exist, so the handlers only translate wire
fields and the :class:`~broker.security.credential_store.ScramCredentialStore` only applies a finished plan.

Alter (Kafka's ``ScramControlManager.alterCredentials``): a user may appear once per request; a second deletion or
upsertion for the same user, whatever the mechanism, fails that user with DUPLICATE_RESOURCE and drops what was
planned for them. Deletions need an existing credential (RESOURCE_NOT_FOUND); upsertions need an iteration count
within the mechanism's bounds (UNACCEPTABLE_CREDENTIAL); an empty user name or an unknown mechanism fail first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from broker.security.scram import SCRAM_SHA_256, SCRAM_SHA_512, ScramCredential, ScramMechanism

__all__ = [
    "MECHANISM_CODES",
    "AlterationPlan",
    "Deletion",
    "DescribeResult",
    "Upsertion",
    "UserResult",
    "describe_users",
    "plan_alterations",
]

#: The ``mechanism`` codes of the SCRAM admin APIs (Kafka's ``org.apache.kafka.clients.admin.ScramMechanism``).
MECHANISM_CODES: dict[int, ScramMechanism] = {1: SCRAM_SHA_256, 2: SCRAM_SHA_512}

NONE, UNSUPPORTED_SASL_MECHANISM, RESOURCE_NOT_FOUND, DUPLICATE_RESOURCE, UNACCEPTABLE_CREDENTIAL = 0, 33, 91, 92, 93
_DUPLICATE = "A user credential cannot be altered twice in the same request"


@dataclass(frozen=True, slots=True)
class Deletion:
    name: str
    mechanism: int


@dataclass(frozen=True, slots=True)
class Upsertion:
    name: str
    mechanism: int
    iterations: int
    salt: bytes
    salted_password: bytes


@dataclass(frozen=True, slots=True)
class UserResult:
    """One entry of the response: the user, an error code and Kafka's message (None on success)."""

    user: str
    error_code: int = NONE
    error_message: str | None = None


@dataclass(slots=True)
class AlterationPlan:
    """What to change (credentials to delete and to set) and the per-user results to answer."""

    deletions: list[tuple[str, ScramMechanism]] = field(default_factory=list)
    upsertions: list[tuple[str, ScramMechanism, ScramCredential]] = field(default_factory=list)
    results: list[UserResult] = field(default_factory=list)


def _check_name_and_mechanism(name: str, mechanism: int) -> UserResult | None:
    if not name:
        return UserResult(name, UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
    if mechanism not in MECHANISM_CODES:
        return UserResult(name, UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
    return None


def _check_deletion(deletion: Deletion, exists: Callable[[str, ScramMechanism], bool]) -> UserResult | None:
    error = _check_name_and_mechanism(deletion.name, deletion.mechanism)
    if error is None and not exists(deletion.name, MECHANISM_CODES[deletion.mechanism]):
        error = UserResult(deletion.name, RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist")
    return error


def _check_upsertion(upsertion: Upsertion) -> UserResult | None:
    error = _check_name_and_mechanism(upsertion.name, upsertion.mechanism)
    if error is not None:
        return error
    mechanism = MECHANISM_CODES[upsertion.mechanism]
    if upsertion.iterations < mechanism.min_iterations:
        return UserResult(upsertion.name, UNACCEPTABLE_CREDENTIAL, "Too few iterations")
    if upsertion.iterations > mechanism.max_iterations:
        return UserResult(upsertion.name, UNACCEPTABLE_CREDENTIAL, "Too many iterations")
    return None


def plan_alterations(
    deletions: Sequence[Deletion],
    upsertions: Sequence[Upsertion],
    exists: Callable[[str, ScramMechanism], bool],
) -> AlterationPlan:
    """Decide an AlterUserScramCredentials request; ``exists(user, mechanism)`` says what is stored now.

    Results come one per user, successes first (deletions then upsertions, in request order), then failures.
    """
    planned_deletions: dict[str, Deletion] = {}
    planned_upsertions: dict[str, Upsertion] = {}
    errors: dict[str, UserResult] = {}
    for deletion in deletions:
        if deletion.name in errors:
            continue
        if planned_deletions.pop(deletion.name, None) is not None:
            errors[deletion.name] = UserResult(deletion.name, DUPLICATE_RESOURCE, _DUPLICATE)
        elif (error := _check_deletion(deletion, exists)) is not None:
            errors[deletion.name] = error
        else:
            planned_deletions[deletion.name] = deletion
    for upsertion in upsertions:
        if upsertion.name in errors:
            continue
        duplicate = planned_deletions.pop(upsertion.name, None) or planned_upsertions.pop(upsertion.name, None)
        if duplicate is not None:
            errors[upsertion.name] = UserResult(upsertion.name, DUPLICATE_RESOURCE, _DUPLICATE)
        elif (error := _check_upsertion(upsertion)) is not None:
            errors[upsertion.name] = error
        else:
            planned_upsertions[upsertion.name] = upsertion
    plan = AlterationPlan()
    for name, deletion in planned_deletions.items():
        plan.deletions.append((name, MECHANISM_CODES[deletion.mechanism]))
        plan.results.append(UserResult(name))
    for name, upsertion in planned_upsertions.items():
        mechanism = MECHANISM_CODES[upsertion.mechanism]
        credential = mechanism.credential_from_salted_password(
            upsertion.salted_password, upsertion.salt, upsertion.iterations
        )
        plan.upsertions.append((name, mechanism, credential))
        plan.results.append(UserResult(name))
    plan.results.extend(errors.values())
    return plan


@dataclass(frozen=True, slots=True)
class DescribeResult:
    """One user of DescribeUserScramCredentials: its credentials as (mechanism code, iterations), or an error."""

    user: str
    error_code: int = NONE
    error_message: str | None = None
    credentials: tuple[tuple[int, int], ...] = ()


def describe_users(users: Sequence[str] | None, stored: dict[str, dict[str, ScramCredential]]) -> list[DescribeResult]:
    """Answer DescribeUserScramCredentials over ``stored`` (user -> mechanism name -> credential).

    No users (null or empty): every user with a credential. A user named twice: DUPLICATE_RESOURCE; a user without
    credentials: RESOURCE_NOT_FOUND, with Kafka's messages.
    """
    codes = {mechanism.name: code for code, mechanism in MECHANISM_CODES.items()}

    def found(user: str) -> DescribeResult:
        infos = tuple(sorted((codes[m], c.iterations) for m, c in stored[user].items()))
        return DescribeResult(user, credentials=infos)

    if not users:
        return [found(user) for user in sorted(stored) if stored[user]]
    results: list[DescribeResult] = []
    for user in dict.fromkeys(users):
        if users.count(user) > 1:
            message = f"Cannot describe SCRAM credentials for the same user twice in a single request: {user}"
            results.append(DescribeResult(user, DUPLICATE_RESOURCE, message))
        elif not stored.get(user):
            message = f"Attempt to describe a user credential that does not exist: {user}"
            results.append(DescribeResult(user, RESOURCE_NOT_FOUND, message))
        else:
            results.append(found(user))
    return results
