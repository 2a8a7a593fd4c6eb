"""Helpers for raw-protocol authorization tests: a broker with Kafka's StandardAuthorizer, clients that act as a
chosen principal, and ACL requests built from short tuples.

A plaintext connection is ``User:ANONYMOUS``; to test a second principal without SASL or certificates the test
sets the broker side's ``ConnectionSession.principal`` of its connection, which is exactly what the listener's
authentication would set (``tests/e2e`` does it for real with mutual TLS).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from broker.app import Broker
from broker.config import STANDARD_AUTHORIZER
from broker.security.acl import AclOperation, AclPermissionType, PatternType, ResourceType
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.create_acls import AclCreation, CreateAclsRequest
from protocol.registry import ApiKey
from tests.broker.conftest import running_broker
from tests.broker.wire import WireClient

ADMIN = "User:admin"
AUTHORIZER = {"authorizer_class_name": STANDARD_AUTHORIZER, "super_users": ADMIN}


@asynccontextmanager
async def acl_broker(tmp_path: Path, **overrides: str) -> AsyncIterator[Broker]:
    """A broker with the StandardAuthorizer and ``User:admin`` as super user (``overrides`` on top)."""
    async with running_broker(tmp_path, **{**AUTHORIZER, **overrides}) as broker:
        yield broker


async def client_as(broker: Broker, principal: str) -> WireClient:
    """A connection the broker sees as ``principal``."""
    client = await WireClient.connect(broker.ports[0])
    local_port = client.writer.get_extra_info("sockname")[1]
    await client.call(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())  # the broker has accepted it once this answers
    [connection] = [c for c in broker.connections if c.session.peer_port == local_port]
    connection.session.principal = principal
    return client


def creation(
    resource: tuple[ResourceType, str],
    principal: str,
    operation: AclOperation,
    permission: AclPermissionType = AclPermissionType.ALLOW,
    *,
    pattern: PatternType = PatternType.LITERAL,
    host: str = "*",
) -> AclCreation:
    return AclCreation(
        resource_type=resource[0],
        resource_name=resource[1],
        resource_pattern_type=pattern,
        principal=principal,
        host=host,
        operation=operation,
        permission_type=permission,
    )


async def grant(admin: WireClient, *creations: AclCreation) -> None:
    """Create ``creations`` as the super user; each must succeed."""
    response = await admin.call(ApiKey.CREATE_ACLS, 3, CreateAclsRequest(creations=list(creations)))
    assert [r.error_code for r in response.results] == [0] * len(creations), response
