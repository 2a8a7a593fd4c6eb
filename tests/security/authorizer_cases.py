"""The authorizer decision table, shared by the unit test and the comparison with Kafka's StandardAuthorizer."""

from __future__ import annotations

import pytest

from broker.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from broker.security.authorizer import Decision

ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
LITERAL, PREFIXED = PatternType.LITERAL, PatternType.PREFIXED
TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
Op = AclOperation


def acl(
    name: str,
    principal: str = "User:alice",
    operation: AclOperation = Op.READ,
    permission: AclPermissionType = ALLOW,
    pattern: PatternType = LITERAL,
    host: str = "*",
    resource: ResourceType = TOPIC,
) -> AclBinding:
    return AclBinding(
        ResourcePattern(resource, name, pattern), AccessControlEntry(principal, host, operation, permission)
    )


# (ACLs, principal, host, operation, resource type, name, decision)
CASES = [
    pytest.param([], "User:alice", "1.1.1.1", Op.READ, TOPIC, "t", Decision.DENIED, id="no ACLs: denied by default"),
    pytest.param([acl("t")], "User:alice", "1.1.1.1", Op.READ, TOPIC, "t", Decision.ALLOWED, id="literal allow"),
    pytest.param([acl("t")], "User:bob", "1.1.1.1", Op.READ, TOPIC, "t", Decision.DENIED, id="another principal"),
    pytest.param([acl("t")], "User:alice", "1.1.1.1", Op.WRITE, TOPIC, "t", Decision.DENIED, id="another operation"),
    pytest.param([acl("t")], "User:alice", "1.1.1.1", Op.READ, TOPIC, "u", Decision.DENIED, id="another topic"),
    pytest.param([acl("t")], "User:alice", "1.1.1.1", Op.READ, GROUP, "t", Decision.DENIED, id="another type"),
    pytest.param([acl("*")], "User:alice", "1.1.1.1", Op.READ, TOPIC, "any", Decision.ALLOWED, id="wildcard resource"),
    pytest.param(
        [acl("*", principal="User:*")], "User:bob", "1.1.1.1", Op.READ, TOPIC, "x", Decision.ALLOWED, id="User:*"
    ),
    pytest.param(
        [acl("orders-", pattern=PREFIXED)],
        "User:alice",
        "h",
        Op.READ,
        TOPIC,
        "orders-eu",
        Decision.ALLOWED,
        id="prefix",
    ),
    pytest.param(
        [acl("orders-", pattern=PREFIXED)], "User:alice", "h", Op.READ, TOPIC, "order", Decision.DENIED, id="not prefix"
    ),
    pytest.param(
        [acl("orders-*")],
        "User:alice",
        "h",
        Op.READ,
        TOPIC,
        "orders-eu",
        Decision.DENIED,
        id="* inside a name is literal",
    ),
    pytest.param(
        [acl("t"), acl("t", permission=DENY)], "User:alice", "h", Op.READ, TOPIC, "t", Decision.DENIED, id="deny wins"
    ),
    pytest.param(
        [acl("t"), acl("t", principal="User:*", permission=DENY)],
        "User:alice",
        "h",
        Op.READ,
        TOPIC,
        "t",
        Decision.DENIED,
        id="wildcard deny beats a user allow",
    ),
    pytest.param(
        [acl("*"), acl("secret-", pattern=PREFIXED, permission=DENY)],
        "User:alice",
        "h",
        Op.READ,
        TOPIC,
        "secret-x",
        Decision.DENIED,
        id="prefixed deny beats wildcard allow",
    ),
    pytest.param(
        [acl("t", operation=Op.ALL)], "User:alice", "h", Op.DELETE, TOPIC, "t", Decision.ALLOWED, id="allow ALL"
    ),
    pytest.param(
        [acl("t", operation=Op.WRITE), acl("t", operation=Op.ALL, permission=DENY)],
        "User:alice",
        "h",
        Op.WRITE,
        TOPIC,
        "t",
        Decision.DENIED,
        id="deny ALL",
    ),
    *[
        pytest.param(
            [acl("t", operation=implying)],
            "User:alice",
            "h",
            Op.DESCRIBE,
            TOPIC,
            "t",
            Decision.ALLOWED,
            id=f"{implying.name} implies DESCRIBE",
        )
        for implying in (Op.READ, Op.WRITE, Op.DELETE, Op.ALTER)
    ],
    *[
        pytest.param(
            [acl("t", operation=other)],
            "User:alice",
            "h",
            Op.DESCRIBE,
            TOPIC,
            "t",
            Decision.DENIED,
            id=f"{other.name} does not imply DESCRIBE",
        )
        for other in (Op.CREATE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS)
    ],
    pytest.param(
        [acl("t", operation=Op.ALTER_CONFIGS)],
        "User:alice",
        "h",
        Op.DESCRIBE_CONFIGS,
        TOPIC,
        "t",
        Decision.ALLOWED,
        id="ALTER_CONFIGS implies DESCRIBE_CONFIGS",
    ),
    pytest.param(
        [acl("t", operation=Op.READ)], "User:alice", "h", Op.WRITE, TOPIC, "t", Decision.DENIED, id="READ is not WRITE"
    ),
    pytest.param(
        [acl("t", operation=Op.DESCRIBE)],
        "User:alice",
        "h",
        Op.READ,
        TOPIC,
        "t",
        Decision.DENIED,
        id="DESCRIBE implies nothing",
    ),
    pytest.param(
        [acl("t", operation=Op.ALL), acl("t", operation=Op.READ, permission=DENY)],
        "User:alice",
        "h",
        Op.DESCRIBE,
        TOPIC,
        "t",
        Decision.ALLOWED,
        id="a DENY of READ does not deny DESCRIBE",
    ),
    pytest.param(
        [acl("t", host="10.0.0.1")], "User:alice", "10.0.0.1", Op.READ, TOPIC, "t", Decision.ALLOWED, id="host"
    ),
    pytest.param(
        [acl("t", host="10.0.0.1")], "User:alice", "10.0.0.2", Op.READ, TOPIC, "t", Decision.DENIED, id="other host"
    ),
    pytest.param(
        [acl("t", host="10.0.0.0/24")], "User:alice", "10.0.0.9", Op.READ, TOPIC, "t", Decision.ALLOWED, id="CIDR host"
    ),
    pytest.param(
        [acl("t", host="10.0.0.0/24")],
        "User:alice",
        "10.0.1.9",
        Op.READ,
        TOPIC,
        "t",
        Decision.DENIED,
        id="outside CIDR",
    ),
    pytest.param(
        [acl("group-a", resource=GROUP)], "User:alice", "h", Op.READ, GROUP, "group-a", Decision.ALLOWED, id="group"
    ),
    pytest.param(
        [acl("kafka-cluster", operation=Op.IDEMPOTENT_WRITE, resource=CLUSTER)],
        "User:alice",
        "h",
        Op.IDEMPOTENT_WRITE,
        CLUSTER,
        "kafka-cluster",
        Decision.ALLOWED,
        id="cluster",
    ),
]


#: (ACLs, decision) for User:alice from 1.1.1.1 reading topic "t" with allow.everyone.if.no.acl.found=true.
ALLOW_EVERYONE_CASES: list[tuple[list[AclBinding], Decision]] = [
    ([], Decision.ALLOWED),
    ([acl("t", principal="User:bob")], Decision.DENIED),
    ([acl("t", operation=Op.WRITE)], Decision.DENIED),
    ([acl("t", host="10.9.9.9")], Decision.DENIED),
    ([acl("other")], Decision.ALLOWED),
    ([acl("t", resource=GROUP)], Decision.ALLOWED),
    ([acl("*", principal="User:bob")], Decision.DENIED),
    ([acl("t", pattern=PREFIXED, principal="User:bob")], Decision.DENIED),
]
