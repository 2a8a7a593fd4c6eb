"""Which (api_key, version) pairs the codec speaks, and the message declarations behind each key.

The ranges are what the real clients negotiate (see the design notes): the codec supports all of them; which ones
the broker *advertises* is the broker's choice, made from what it implements, through `supported_range`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from protocol.declarations import MessageDecl
from protocol.messages import (
    api_versions,
    consumer_group_describe,
    consumer_group_heartbeat,
    create_partitions,
    create_topics,
    delete_groups,
    delete_topics,
    describe_configs,
    describe_groups,
    fetch,
    find_coordinator,
    heartbeat,
    init_producer_id,
    join_group,
    leave_group,
    list_groups,
    list_offsets,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    produce,
    sasl_authenticate,
    sasl_handshake,
    sync_group,
)


class ApiKey(IntEnum):
    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    SASL_HANDSHAKE = 17
    API_VERSIONS = 18
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    INIT_PRODUCER_ID = 22
    DESCRIBE_CONFIGS = 32
    SASL_AUTHENTICATE = 36
    CREATE_PARTITIONS = 37
    DELETE_GROUPS = 42
    OFFSET_DELETE = 47
    CONSUMER_GROUP_HEARTBEAT = 68
    CONSUMER_GROUP_DESCRIBE = 69


@dataclass(frozen=True, slots=True, eq=False)
class ApiSpec:
    """One API: its request/response declarations and the version range the codec supports."""

    key: ApiKey
    request: MessageDecl
    response: MessageDecl
    min_version: int
    max_version: int

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version

    def flexible(self, version: int) -> bool:
        return version in self.request.flexible


def _spec(key: ApiKey, request: MessageDecl, response: MessageDecl, lo: int, hi: int) -> ApiSpec:
    assert lo in request.valid and hi in request.valid, (key, lo, hi)
    return ApiSpec(key, request, response, lo, hi)


APIS: dict[int, ApiSpec] = {
    spec.key: spec
    for spec in (
        _spec(ApiKey.API_VERSIONS, api_versions.API_VERSIONS_REQUEST, api_versions.API_VERSIONS_RESPONSE, 0, 4),
        _spec(ApiKey.METADATA, metadata.METADATA_REQUEST, metadata.METADATA_RESPONSE, 0, 12),
        _spec(ApiKey.PRODUCE, produce.PRODUCE_REQUEST, produce.PRODUCE_RESPONSE, 3, 10),
        _spec(ApiKey.FETCH, fetch.FETCH_REQUEST, fetch.FETCH_RESPONSE, 4, 16),
        _spec(ApiKey.LIST_OFFSETS, list_offsets.LIST_OFFSETS_REQUEST, list_offsets.LIST_OFFSETS_RESPONSE, 0, 8),
        _spec(
            ApiKey.FIND_COORDINATOR,
            find_coordinator.FIND_COORDINATOR_REQUEST,
            find_coordinator.FIND_COORDINATOR_RESPONSE,
            0,
            6,
        ),
        _spec(ApiKey.JOIN_GROUP, join_group.JOIN_GROUP_REQUEST, join_group.JOIN_GROUP_RESPONSE, 0, 9),
        _spec(ApiKey.SYNC_GROUP, sync_group.SYNC_GROUP_REQUEST, sync_group.SYNC_GROUP_RESPONSE, 0, 5),
        _spec(ApiKey.HEARTBEAT, heartbeat.HEARTBEAT_REQUEST, heartbeat.HEARTBEAT_RESPONSE, 0, 4),
        _spec(ApiKey.LEAVE_GROUP, leave_group.LEAVE_GROUP_REQUEST, leave_group.LEAVE_GROUP_RESPONSE, 0, 5),
        _spec(ApiKey.OFFSET_COMMIT, offset_commit.OFFSET_COMMIT_REQUEST, offset_commit.OFFSET_COMMIT_RESPONSE, 0, 9),
        _spec(ApiKey.OFFSET_FETCH, offset_fetch.OFFSET_FETCH_REQUEST, offset_fetch.OFFSET_FETCH_RESPONSE, 0, 9),
        _spec(
            ApiKey.DESCRIBE_GROUPS,
            describe_groups.DESCRIBE_GROUPS_REQUEST,
            describe_groups.DESCRIBE_GROUPS_RESPONSE,
            0,
            5,
        ),
        _spec(ApiKey.LIST_GROUPS, list_groups.LIST_GROUPS_REQUEST, list_groups.LIST_GROUPS_RESPONSE, 0, 5),
        _spec(ApiKey.DELETE_GROUPS, delete_groups.DELETE_GROUPS_REQUEST, delete_groups.DELETE_GROUPS_RESPONSE, 0, 2),
        _spec(ApiKey.OFFSET_DELETE, offset_delete.OFFSET_DELETE_REQUEST, offset_delete.OFFSET_DELETE_RESPONSE, 0, 0),
        _spec(ApiKey.CREATE_TOPICS, create_topics.CREATE_TOPICS_REQUEST, create_topics.CREATE_TOPICS_RESPONSE, 0, 7),
        _spec(ApiKey.DELETE_TOPICS, delete_topics.DELETE_TOPICS_REQUEST, delete_topics.DELETE_TOPICS_RESPONSE, 0, 6),
        _spec(
            ApiKey.CREATE_PARTITIONS,
            create_partitions.CREATE_PARTITIONS_REQUEST,
            create_partitions.CREATE_PARTITIONS_RESPONSE,
            0,
            3,
        ),
        _spec(
            ApiKey.INIT_PRODUCER_ID,
            init_producer_id.INIT_PRODUCER_ID_REQUEST,
            init_producer_id.INIT_PRODUCER_ID_RESPONSE,
            0,
            5,
        ),
        _spec(
            ApiKey.DESCRIBE_CONFIGS,
            describe_configs.DESCRIBE_CONFIGS_REQUEST,
            describe_configs.DESCRIBE_CONFIGS_RESPONSE,
            0,
            4,
        ),
        _spec(
            ApiKey.CONSUMER_GROUP_HEARTBEAT,
            consumer_group_heartbeat.CONSUMER_GROUP_HEARTBEAT_REQUEST,
            consumer_group_heartbeat.CONSUMER_GROUP_HEARTBEAT_RESPONSE,
            0,
            1,
        ),
        _spec(
            ApiKey.CONSUMER_GROUP_DESCRIBE,
            consumer_group_describe.CONSUMER_GROUP_DESCRIBE_REQUEST,
            consumer_group_describe.CONSUMER_GROUP_DESCRIBE_RESPONSE,
            0,
            0,
        ),
        _spec(
            ApiKey.SASL_HANDSHAKE,
            sasl_handshake.SASL_HANDSHAKE_REQUEST,
            sasl_handshake.SASL_HANDSHAKE_RESPONSE,
            0,
            1,
        ),
        _spec(
            ApiKey.SASL_AUTHENTICATE,
            sasl_authenticate.SASL_AUTHENTICATE_REQUEST,
            sasl_authenticate.SASL_AUTHENTICATE_RESPONSE,
            0,
            2,
        ),
    )
}


def supported_range(api_key: int) -> tuple[int, int] | None:
    spec = APIS.get(api_key)
    return None if spec is None else (spec.min_version, spec.max_version)
