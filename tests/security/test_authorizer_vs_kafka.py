"""The authorizer's decision table answered by Kafka 4.4's own StandardAuthorizer: both must agree on every case."""

from __future__ import annotations

from dataclasses import replace

import pytest

from broker.security.acl import AclOperation, ResourceType
from broker.security.authorizer import Authorizer, parse_super_users
from tests.reference.authorizer_check import AuthorizerCase, ask_standard_authorizer, unavailable_reason
from tests.security.authorizer_cases import ALLOW_EVERYONE_CASES, CASES, DENY, acl

#: The table's symbolic host "h" as an address Java can parse.
HOST = "9.9.9.9"


def _address(host: str) -> str:
    return HOST if host == "h" else host


def _cases() -> list[AuthorizerCase]:
    cases = []
    for param in CASES:
        acls, principal, host, operation, resource_type, name, _ = param.values
        moved = [replace(b, entry=replace(b.entry, host=_address(b.entry.host))) for b in acls]
        cases.append(AuthorizerCase(moved, principal, _address(host), operation, resource_type, name))
    cases += [
        AuthorizerCase(acls, "User:alice", "1.1.1.1", AclOperation.READ, ResourceType.TOPIC, "t", True)
        for acls, _ in ALLOW_EVERYONE_CASES
    ]
    deny_all = [acl("t", principal="User:*", operation=AclOperation.ALL, permission=DENY)]
    cases += [
        AuthorizerCase(
            deny_all, user, HOST, AclOperation.WRITE, ResourceType.TOPIC, "t", super_users="User:admin;User:ops"
        )
        for user in ("User:admin", "User:ops", "User:alice")
    ]
    return cases


def _ours(case: AuthorizerCase) -> str:
    authorizer = Authorizer(parse_super_users(case.super_users), case.allow_everyone_if_no_acl_found)
    authorizer.add(list(case.acls))
    return authorizer.authorize(case.principal, case.host, case.operation, case.resource_type, case.name).value


@pytest.fixture(scope="module")
def kafka_available() -> None:
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)


@pytest.mark.usefixtures("kafka_available")
def test_every_decision_agrees_with_kafkas_standard_authorizer() -> None:
    cases = _cases()
    kafka = ask_standard_authorizer(cases)
    disagreements = [
        (case, ours, theirs) for case, theirs in zip(cases, kafka, strict=True) if (ours := _ours(case)) != theirs
    ]
    assert disagreements == []
    assert {"ALLOWED", "DENIED"} <= set(kafka)  # the table exercises both answers
