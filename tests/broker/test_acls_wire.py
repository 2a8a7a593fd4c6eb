"""CreateAcls, DescribeAcls and DeleteAcls over the raw protocol at every version Kafka 4.4 serves (1-3): Kafka's
answers without an authorizer, for a caller not allowed on the cluster, for invalid ACLs and UNKNOWN elements, and
ACLs kept across a restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker.app import Broker
from broker.security.acl import AclOperation, AclPermissionType, PatternType, ResourceType
from protocol.errors import ErrorCode
from protocol.messages.create_acls import CreateAclsRequest
from protocol.messages.delete_acls import DeleteAclsFilter, DeleteAclsRequest
from protocol.messages.describe_acls import DescribeAclsRequest
from protocol.registry import ApiKey
from tests.broker.acl_wire import ADMIN, acl_broker, client_as, creation, grant
from tests.broker.wire import WireClient

VERSIONS = [1, 2, 3]
TOPIC_T = (ResourceType.TOPIC, "t")
ALICE_READ_T = creation(TOPIC_T, "User:alice", AclOperation.READ)
BOB_WRITE_PREFIX = creation((ResourceType.TOPIC, "app-"), "User:bob", AclOperation.WRITE, pattern=PatternType.PREFIXED)
DENY_GROUP = creation((ResourceType.GROUP, "g"), "User:*", AclOperation.ALL, AclPermissionType.DENY, host="10.0.0.0/8")
EVERYTHING = DescribeAclsRequest(
    resource_type_filter=ResourceType.ANY,
    resource_name_filter=None,
    pattern_type_filter=PatternType.ANY,
    principal_filter=None,
    host_filter=None,
    operation=AclOperation.ANY,
    permission_type=AclPermissionType.ANY,
)


def _delete_filter(**fields: object) -> DeleteAclsFilter:
    base = {k: getattr(EVERYTHING, k) for k in DeleteAclsFilter.__dataclass_fields__ if k != "unknown_tagged_fields"}
    return DeleteAclsFilter(**{**base, **fields})  # type: ignore[arg-type]


def _described(response: object) -> set[tuple[object, ...]]:
    return {
        (r.resource_type, r.resource_name, r.pattern_type, a.principal, a.host, a.operation, a.permission_type)
        for r in response.resources  # type: ignore[attr-defined]
        for a in r.acls
    }


@pytest.mark.parametrize("version", VERSIONS)
async def test_without_an_authorizer_every_acl_api_answers_security_disabled(broker: Broker, version: int) -> None:
    client = await WireClient.connect(broker.ports[0])
    created = await client.call(ApiKey.CREATE_ACLS, version, CreateAclsRequest(creations=[ALICE_READ_T] * 2))
    assert [(r.error_code, r.error_message) for r in created.results] == [
        (ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.")
    ] * 2
    described = await client.call(ApiKey.DESCRIBE_ACLS, version, EVERYTHING)
    assert (described.error_code, described.error_message) == (
        ErrorCode.SECURITY_DISABLED,
        "No Authorizer is configured on the broker",
    )
    deleted = await client.call(ApiKey.DELETE_ACLS, version, DeleteAclsRequest(filters=[_delete_filter()]))
    assert [(r.error_code, r.error_message) for r in deleted.filter_results] == [
        (ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.")
    ]
    await client.close()


@pytest.mark.parametrize("version", VERSIONS)
async def test_acls_are_created_described_by_filter_and_deleted(tmp_path: Path, version: int) -> None:
    async with acl_broker(tmp_path) as broker:
        admin = await client_as(broker, ADMIN)
        created = await admin.call(
            ApiKey.CREATE_ACLS, version, CreateAclsRequest(creations=[ALICE_READ_T, BOB_WRITE_PREFIX, DENY_GROUP])
        )
        assert [(r.error_code, r.error_message) for r in created.results] == [(0, "")] * 3
        everything = await admin.call(ApiKey.DESCRIBE_ACLS, version, EVERYTHING)
        assert everything.error_code == 0
        assert len(_described(everything)) == 3
        # MATCH: every pattern that applies to the topic "app-1" (the prefixed "app-" one).
        match = DescribeAclsRequest(
            **{
                **{k: getattr(EVERYTHING, k) for k in ("principal_filter", "host_filter")},
                "resource_type_filter": ResourceType.TOPIC,
                "resource_name_filter": "app-1",
                "pattern_type_filter": PatternType.MATCH,
                "operation": AclOperation.ANY,
                "permission_type": AclPermissionType.ANY,
            }
        )
        matched = await admin.call(ApiKey.DESCRIBE_ACLS, version, match)
        assert _described(matched) == {
            (
                ResourceType.TOPIC,
                "app-",
                PatternType.PREFIXED,
                "User:bob",
                "*",
                AclOperation.WRITE,
                AclPermissionType.ALLOW,
            )
        }
        deleted = await admin.call(
            ApiKey.DELETE_ACLS,
            version,
            DeleteAclsRequest(
                filters=[
                    _delete_filter(principal_filter="User:alice"),
                    _delete_filter(resource_type_filter=ResourceType.GROUP),
                    _delete_filter(principal_filter="User:nobody"),
                ]
            ),
        )
        assert [r.error_code for r in deleted.filter_results] == [0, 0, 0]
        assert [[(m.resource_name, m.principal) for m in r.matching_acls] for r in deleted.filter_results] == [
            [("t", "User:alice")],
            [("g", "User:*")],
            [],
        ]
        left = await admin.call(ApiKey.DESCRIBE_ACLS, version, EVERYTHING)
        assert {acl[3] for acl in _described(left)} == {"User:bob"}
        await admin.close()


async def test_creating_an_existing_acl_again_succeeds_and_keeps_it_once(tmp_path: Path) -> None:
    async with acl_broker(tmp_path) as broker:
        admin = await client_as(broker, ADMIN)
        await grant(admin, ALICE_READ_T, ALICE_READ_T)
        await grant(admin, ALICE_READ_T)
        described = await admin.call(ApiKey.DESCRIBE_ACLS, 3, EVERYTHING)
        assert [len(r.acls) for r in described.resources] == [1]
        await admin.close()


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (creation((ResourceType.CLUSTER, "other"), ADMIN, AclOperation.ALTER), "The only valid name for the CLUSTER"),
        (creation((ResourceType.TOPIC, ""), ADMIN, AclOperation.READ), "Invalid empty resource name"),
        (creation(TOPIC_T, "alice", AclOperation.READ), "Could not parse principal from `alice`"),
        (creation(TOPIC_T, ADMIN, AclOperation.READ, host=""), "Host pattern cannot be null or empty"),
        (creation(TOPIC_T, ADMIN, AclOperation.READ, host="10.0.0.0/99"), "Value [99] not in range [0,32]"),
    ],
)
async def test_an_invalid_acl_is_refused_alone_with_kafkas_message(tmp_path: Path, bad: object, message: str) -> None:
    async with acl_broker(tmp_path) as broker:
        admin = await client_as(broker, ADMIN)
        created = await admin.call(ApiKey.CREATE_ACLS, 3, CreateAclsRequest(creations=[bad, ALICE_READ_T]))  # type: ignore[list-item]
        [refused, accepted] = created.results
        assert refused.error_code == ErrorCode.INVALID_REQUEST
        assert message in refused.error_message
        assert accepted.error_code == 0
        described = await admin.call(ApiKey.DESCRIBE_ACLS, 3, EVERYTHING)
        assert {acl[3] for acl in _described(described)} == {"User:alice"}
        await admin.close()


@pytest.mark.parametrize(
    "unbuildable",
    [
        creation((ResourceType.ANY, "t"), ADMIN, AclOperation.READ),
        creation(TOPIC_T, ADMIN, AclOperation.READ, pattern=PatternType.MATCH),
        creation(TOPIC_T, ADMIN, AclOperation.READ, pattern=PatternType.ANY),
        creation(TOPIC_T, ADMIN, AclOperation.ANY),
        creation(TOPIC_T, ADMIN, AclOperation.READ, AclPermissionType.ANY),
    ],
)
async def test_an_acl_kafka_cannot_build_fails_the_whole_request(tmp_path: Path, unbuildable: object) -> None:
    """Kafka's ResourcePattern and AccessControlEntry refuse ANY (and MATCH) before any check: every result is
    UNKNOWN_SERVER_ERROR without a message and nothing is created (the differential acl_admin scenario)."""
    async with acl_broker(tmp_path) as broker:
        admin = await client_as(broker, ADMIN)
        body = CreateAclsRequest(creations=[ALICE_READ_T, unbuildable])  # type: ignore[list-item]
        created = await admin.call(ApiKey.CREATE_ACLS, 3, body)
        assert [(r.error_code, r.error_message) for r in created.results] == [
            (ErrorCode.UNKNOWN_SERVER_ERROR, None)
        ] * 2
        described = await admin.call(ApiKey.DESCRIBE_ACLS, 3, EVERYTHING)
        assert described.resources == []
        await admin.close()


@pytest.mark.parametrize("version", VERSIONS)
async def test_a_caller_not_allowed_on_the_cluster_is_refused_whole(tmp_path: Path, version: int) -> None:
    async with acl_broker(tmp_path) as broker:
        admin = await client_as(broker, ADMIN)
        await grant(admin, creation((ResourceType.CLUSTER, "kafka-cluster"), "User:alice", AclOperation.DESCRIBE))
        alice = await client_as(broker, "User:alice")
        anonymous = await WireClient.connect(broker.ports[0])
        for caller, may_describe in ((alice, True), (anonymous, False)):
            created = await caller.call(ApiKey.CREATE_ACLS, version, CreateAclsRequest(creations=[ALICE_READ_T]))
            assert [r.error_code for r in created.results] == [ErrorCode.CLUSTER_AUTHORIZATION_FAILED]
            assert "is not authorized" in created.results[0].error_message
            deleted = await caller.call(ApiKey.DELETE_ACLS, version, DeleteAclsRequest(filters=[_delete_filter()]))
            assert [r.error_code for r in deleted.filter_results] == [ErrorCode.CLUSTER_AUTHORIZATION_FAILED]
            described = await caller.call(ApiKey.DESCRIBE_ACLS, version, EVERYTHING)
            expected = ErrorCode.NONE if may_describe else ErrorCode.CLUSTER_AUTHORIZATION_FAILED
            assert described.error_code == expected
        assert len(broker.authorization.authorizer.bindings()) == 1  # type: ignore[union-attr]
        for client in (admin, alice, anonymous):
            await client.close()


@pytest.mark.parametrize(
    ("api_key", "request_"),
    [
        (ApiKey.CREATE_ACLS, CreateAclsRequest(creations=[creation((ResourceType.UNKNOWN, "t"), ADMIN, 3)])),  # type: ignore[arg-type]
        (ApiKey.CREATE_ACLS, CreateAclsRequest(creations=[creation(TOPIC_T, ADMIN, 99)])),  # type: ignore[arg-type]
        (ApiKey.DESCRIBE_ACLS, DescribeAclsRequest(resource_type_filter=1, pattern_type_filter=1, operation=0)),
        (ApiKey.DELETE_ACLS, DeleteAclsRequest(filters=[_delete_filter(permission_type=0)])),
    ],
)
async def test_an_unknown_element_closes_the_connection_as_kafkas_parse_does(
    tmp_path: Path, api_key: ApiKey, request_: object
) -> None:
    async with acl_broker(tmp_path) as broker:
        admin = await client_as(broker, ADMIN)
        _, frame = admin.frame(api_key, 3, request_)
        admin.writer.write(frame)
        assert await admin.closed_by_peer()
        other = await client_as(broker, ADMIN)  # the broker serves the others
        assert (await other.call(ApiKey.DESCRIBE_ACLS, 3, EVERYTHING)).error_code == 0
        await admin.close()
        await other.close()


async def test_acls_survive_a_restart(tmp_path: Path) -> None:
    async with acl_broker(tmp_path) as broker:
        admin = await client_as(broker, ADMIN)
        await grant(admin, ALICE_READ_T, DENY_GROUP)
        await admin.call(
            ApiKey.DELETE_ACLS, 3, DeleteAclsRequest(filters=[_delete_filter(resource_type_filter=ResourceType.GROUP)])
        )
        await admin.close()
    async with acl_broker(tmp_path) as broker:
        admin = await client_as(broker, ADMIN)
        described = await admin.call(ApiKey.DESCRIBE_ACLS, 3, EVERYTHING)
        assert {acl[1] for acl in _described(described)} == {"t"}
        await admin.close()


async def test_a_failed_acl_write_answers_unknown_server_error_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from broker.security import acl_store

    async with acl_broker(tmp_path) as broker:
        admin = await client_as(broker, ADMIN)
        await grant(admin, ALICE_READ_T)

        def full_disk(path: Path, data: bytes) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(acl_store, "atomic_write", full_disk)
        created = await admin.call(ApiKey.CREATE_ACLS, 3, CreateAclsRequest(creations=[DENY_GROUP]))
        assert [r.error_code for r in created.results] == [ErrorCode.UNKNOWN_SERVER_ERROR]
        deleted = await admin.call(ApiKey.DELETE_ACLS, 3, DeleteAclsRequest(filters=[_delete_filter()]))
        assert [(r.error_code, r.matching_acls) for r in deleted.filter_results] == [
            (ErrorCode.UNKNOWN_SERVER_ERROR, [])
        ]
        described = await admin.call(ApiKey.DESCRIBE_ACLS, 3, EVERYTHING)
        assert {acl[3] for acl in _described(described)} == {"User:alice"}
        await admin.close()
