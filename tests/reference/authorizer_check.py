"""Kafka's StandardAuthorizer itself, asked for decisions (differential tests of broker/security/authorizer.py).

Runs tests/reference/authorizer/StandardAuthorizerCheck.java as a single-file source program on the reference
broker's classpath (fetched by `make test`), so the answers are those of the pinned Kafka.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from broker.security.acl import AclBinding, AclOperation, ResourceType
from tests.reference.kafka import LIB
from tests.reference.kafka import unavailable_reason as _broker_unavailable

CHECKER = Path(__file__).parent / "authorizer" / "StandardAuthorizerCheck.java"


@dataclass(frozen=True, slots=True)
class AuthorizerCase:
    """One question: these ACLs and settings, this principal from this host doing this on this resource."""

    acls: Sequence[AclBinding]
    principal: str
    host: str
    operation: AclOperation
    resource_type: ResourceType
    name: str
    allow_everyone_if_no_acl_found: bool = False
    super_users: str = ""


def unavailable_reason() -> str | None:
    """Why Kafka's authorizer cannot be asked here, or None (it needs what the reference broker needs)."""
    return _broker_unavailable()


def _line(case: AuthorizerCase) -> str:
    acls = ";".join(
        f"{b.pattern.resource_type.name},{b.pattern.name},{b.pattern.pattern_type.name},"
        f"{b.entry.principal},{b.entry.host},{b.entry.operation.name},{b.entry.permission.name}"
        for b in case.acls
    )
    allow = "true" if case.allow_everyone_if_no_acl_found else "false"
    query = f"{case.principal},{case.host},{case.operation.name},{case.resource_type.name},{case.name}"
    return f"{allow}|{case.super_users}|{acls}|{query}"


def ask_standard_authorizer(cases: Sequence[AuthorizerCase]) -> list[str]:
    """Kafka's decision (``ALLOWED`` or ``DENIED``) for every case, in order."""
    done = subprocess.run(
        ["java", "-cp", str(LIB / "*"), str(CHECKER)],
        input="".join(_line(case) + "\n" for case in cases),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    answers = done.stdout.split()
    assert len(answers) == len(cases), done.stderr
    return answers
