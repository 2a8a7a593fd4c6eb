"""``Access``, one request's view of the authorizer: Kafka's ``authorizeByResourceType`` (what an idempotent
producer's InitProducerId asks: WRITE on any topic), the authorized-operations bit field, and the authorizer built
from the configuration with its ACLs loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker.authorization import Access, Authorization
from broker.config import STANDARD_AUTHORIZER, BrokerConfig
from broker.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from broker.security.acl_store import AclStore
from broker.security.authorizer import Authorizer

ALICE = "User:alice"
W, ALLOW, DENY = AclOperation.WRITE, AclPermissionType.ALLOW, AclPermissionType.DENY


def _acl(name: str, permission: AclPermissionType, pattern: PatternType = PatternType.LITERAL, **kw: str) -> AclBinding:
    return AclBinding(
        ResourcePattern(ResourceType.TOPIC, name, pattern),
        AccessControlEntry(kw.get("principal", ALICE), kw.get("host", "*"), W, permission),
    )


@pytest.mark.parametrize(
    ("acls", "allow_everyone", "expected"),
    [
        ([], True, True),  # no ACL on any topic, everyone allowed
        ([], False, False),
        ([_acl("orders", ALLOW)], False, True),
        ([_acl("orders", ALLOW), _acl("orders", DENY)], False, False),
        ([_acl("app-", ALLOW, PatternType.PREFIXED), _acl("app", DENY, PatternType.PREFIXED)], False, False),
        ([_acl("orders", ALLOW), _acl("*", DENY)], False, False),
        ([_acl("orders", ALLOW), _acl("billing", DENY)], False, True),
        ([_acl("orders", ALLOW, principal="User:bob")], False, False),
        ([_acl("orders", ALLOW, host="10.0.0.0/8")], False, False),  # the caller is 127.0.0.1
    ],
)
def test_write_on_any_topic_as_kafkas_authorize_by_resource_type(
    acls: list[AclBinding], allow_everyone: bool, expected: bool
) -> None:
    authorizer = Authorizer(allow_everyone_if_no_acl_found=allow_everyone)
    authorizer.add(acls)
    assert Access(authorizer, ALICE, "127.0.0.1").any_allowed(W, ResourceType.TOPIC) is expected


def test_a_super_user_may_write_any_topic_whatever_the_acls() -> None:
    authorizer = Authorizer(super_users=frozenset({ALICE}))
    authorizer.add([_acl("*", DENY)])
    assert Access(authorizer, ALICE, "127.0.0.1").any_allowed(W, ResourceType.TOPIC)


def test_authorized_operations_are_the_supported_ones_allowed() -> None:
    authorizer = Authorizer()
    authorizer.add([_acl("orders", ALLOW)])
    access = Access(authorizer, ALICE, "127.0.0.1")
    assert access.operations(ResourceType.TOPIC, "orders") == (1 << W) | (1 << AclOperation.DESCRIBE)
    assert access.operations(ResourceType.TOPIC, "billing") == 0


def test_no_authorizer_without_the_class_name_and_the_stored_acls_with_it(tmp_path: Path) -> None:
    assert Authorization(BrokerConfig(), tmp_path).authorizer is None
    AclStore(tmp_path).save([_acl("orders", ALLOW)])
    config = BrokerConfig({"authorizer.class.name": STANDARD_AUTHORIZER, "super.users": "User:admin"})
    authorization = Authorization(config, tmp_path)
    assert authorization.authorizer is not None
    assert authorization.authorizer.bindings() == [_acl("orders", ALLOW)]
    assert authorization.authorizer.super_users == frozenset({"User:admin"})
