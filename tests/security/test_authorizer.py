"""The ACL decision table with StandardAuthorizer's semantics (cases of Kafka's StandardAuthorizerTest and docs)."""

from __future__ import annotations

import pytest

from broker.security.acl import AclBinding, AclOperation, ResourceType
from broker.security.authorizer import Authorizer, Decision, parse_super_users
from tests.security.authorizer_cases import ALLOW_EVERYONE_CASES, CASES, DENY, TOPIC, Op, acl


@pytest.mark.parametrize(("acls", "principal", "host", "operation", "resource_type", "name", "decision"), CASES)
def test_decision_table(
    acls: list[AclBinding],
    principal: str,
    host: str,
    operation: AclOperation,
    resource_type: ResourceType,
    name: str,
    decision: Decision,
) -> None:
    authorizer = Authorizer()
    authorizer.add(acls)
    assert authorizer.authorize(principal, host, operation, resource_type, name) is decision


def test_super_users_may_do_everything_even_when_denied() -> None:
    authorizer = Authorizer(super_users=parse_super_users(" User:admin ; User:ops;"))
    assert authorizer.super_users == {"User:admin", "User:ops"}
    authorizer.add([acl("t", principal="User:*", operation=Op.ALL, permission=DENY)])
    assert authorizer.authorize("User:admin", "h", Op.WRITE, TOPIC, "t") is Decision.ALLOWED
    assert authorizer.authorize("User:alice", "h", Op.WRITE, TOPIC, "t") is Decision.DENIED


@pytest.mark.parametrize(("acls", "decision"), ALLOW_EVERYONE_CASES)
def test_allow_everyone_if_no_acl_found_applies_only_to_resources_without_any_acl(
    acls: list[AclBinding], decision: Decision
) -> None:
    authorizer = Authorizer(allow_everyone_if_no_acl_found=True)
    authorizer.add(acls)
    assert authorizer.authorize("User:alice", "1.1.1.1", Op.READ, TOPIC, "t") is decision


def test_authorized_operations_is_the_bit_field_of_the_allowed_supported_operations() -> None:
    authorizer = Authorizer()
    authorizer.add([acl("t", operation=Op.WRITE), acl("t", operation=Op.ALTER_CONFIGS)])
    supported = [Op.READ, Op.WRITE, Op.DESCRIBE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS]
    expected = (1 << Op.WRITE) | (1 << Op.DESCRIBE) | (1 << Op.DESCRIBE_CONFIGS) | (1 << Op.ALTER_CONFIGS)
    assert authorizer.authorized_operations("User:alice", "h", TOPIC, "t", supported) == expected
