"""Golden bytes for the codec: every expected frame below is assembled by hand from the Kafka protocol guide
(https://kafka.apache.org/protocol) and the JSON schemas, one comment per field, never produced by the codec.

Each test checks both directions: encoding the object gives exactly these bytes, and decoding these bytes gives back
an object equal to the one we started from (unknown tagged fields included, since they take part in `==`).

Wire rules used throughout:
  * int8/16/32/64 are big-endian two's complement; bool is one byte; uuid is 16 raw bytes.
  * Non-flexible versions: string = int16 length + UTF-8 (null: length -1 = ff ff); bytes = int32 length
    (null: ff ff ff ff); array = int32 count (null: ff ff ff ff).
  * Flexible versions: compact string/bytes/array = unsigned varint of N+1 (0 = null), and every struct, the
    message body and header v2 / v1 included, ends with a tagged-field section: uvarint count, then per field
    uvarint tag, uvarint size, bytes. "00" is an empty section.
  * Request header v1 = api_key, api_version, correlation_id, client_id; v2 = v1 + tagged fields, where client_id
    stays an int16-length nullable string (RequestHeader.json: "flexibleVersions": "none").
  * Response header v0 = correlation_id; v1 = v0 + tagged fields; ApiVersions responses always use v0 (KIP-511).

Every request below uses correlation_id = 7 (00 00 00 07) and client_id = "cli" (00 03 63 6c 69) unless the test
is about the header itself. This file covers the headers and every API: ApiVersions, Metadata and the group APIs
first, then produce/fetch/list-offsets, SASL, topic admin and configs, then the transaction APIs (producer id 4096,
epoch 3 throughout); the `__consumer_offsets`, `__transaction_state` and consumer-protocol blobs are in
test_golden_blobs.py.
"""

from __future__ import annotations

import pathlib
import re
import struct
import uuid
from typing import Any

import pytest

from protocol.api import decode_request, decode_response, encode_request, encode_response
from protocol.errors import EncodeError
from protocol.messages import alter_configs as alter
from protocol.messages import incremental_alter_configs as incremental
from protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest, AddOffsetsToTxnResponse
from protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnPartitionResult,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnResult,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTopicResult,
    AddPartitionsToTxnTransaction,
)
from protocol.messages.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    ReassignablePartition,
    ReassignablePartitionResponse,
    ReassignableTopic,
    ReassignableTopicResponse,
)
from protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    AlterUserScramCredentialsResult,
    ScramCredentialDeletion,
    ScramCredentialUpsertion,
)
from protocol.messages.api_versions import (
    ApiVersion,
    ApiVersionsRequest,
    ApiVersionsResponse,
    SupportedFeatureKey,
)
from protocol.messages.consumer_group_describe import ConsumerGroupDescribeRequest
from protocol.messages.consumer_group_heartbeat import (
    Assignment,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    TopicPartitions,
)
from protocol.messages.create_acls import AclCreation, AclCreationResult, CreateAclsRequest, CreateAclsResponse
from protocol.messages.create_partitions import CreatePartitionsRequest, CreatePartitionsTopic
from protocol.messages.create_topics import (
    CreatableTopic,
    CreatableTopicConfig,
    CreatableTopicResult,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from protocol.messages.delete_acls import (
    DeleteAclsFilter,
    DeleteAclsFilterResult,
    DeleteAclsMatchingAcl,
    DeleteAclsRequest,
    DeleteAclsResponse,
)
from protocol.messages.delete_groups import DeletableGroupResult, DeleteGroupsRequest, DeleteGroupsResponse
from protocol.messages.delete_records import (
    DeleteRecordsPartition,
    DeleteRecordsPartitionResult,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    DeleteRecordsTopic,
    DeleteRecordsTopicResult,
)
from protocol.messages.delete_topics import DeleteTopicsRequest, DeleteTopicState
from protocol.messages.describe_acls import (
    AclDescription,
    DescribeAclsRequest,
    DescribeAclsResource,
    DescribeAclsResponse,
)
from protocol.messages.describe_cluster import DescribeClusterBroker, DescribeClusterRequest, DescribeClusterResponse
from protocol.messages.describe_configs import DescribeConfigsRequest, DescribeConfigsResource
from protocol.messages.describe_groups import (
    DescribedGroup,
    DescribedGroupMember,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
)
from protocol.messages.describe_log_dirs import (
    DescribeLogDirsPartition,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
    DescribeLogDirsResult,
    DescribeLogDirsTopic,
)
from protocol.messages.describe_producers import (
    DescribeProducersRequest,
    DescribeProducersResponse,
    PartitionResponse,
    ProducerState,
    TopicRequest,
    TopicResponse,
)
from protocol.messages.describe_quorum import (
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    DescribeQuorumResponsePartitionData,
    DescribeQuorumResponseTopicData,
    ReplicaState,
)
from protocol.messages.describe_quorum import Listener as QuorumListener
from protocol.messages.describe_quorum import Node as QuorumNode
from protocol.messages.describe_quorum import PartitionData as QuorumPartitionData
from protocol.messages.describe_quorum import TopicData as QuorumTopicData
from protocol.messages.describe_topic_partitions import Cursor as DtpCursor
from protocol.messages.describe_topic_partitions import (
    DescribeTopicPartitionsRequest,
    DescribeTopicPartitionsResponse,
    DescribeTopicPartitionsResponsePartition,
    DescribeTopicPartitionsResponseTopic,
)
from protocol.messages.describe_topic_partitions import TopicRequest as DtpTopicRequest
from protocol.messages.describe_transactions import DescribeTransactionsRequest, DescribeTransactionsResponse, TopicData
from protocol.messages.describe_transactions import TransactionState as DescribedTransactionState
from protocol.messages.describe_user_scram_credentials import (
    CredentialInfo,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
    DescribeUserScramCredentialsResult,
    UserName,
)
from protocol.messages.elect_leaders import ElectLeadersRequest, ElectLeadersResponse, ReplicaElectionResult
from protocol.messages.elect_leaders import PartitionResult as ElectPartitionResult
from protocol.messages.elect_leaders import TopicPartitions as ElectTopicPartitions
from protocol.messages.end_txn import EndTxnRequest, EndTxnResponse
from protocol.messages.fetch import (
    FetchableTopicResponse,
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchTopic,
    LeaderIdAndEpoch,
    PartitionData,
)
from protocol.messages.find_coordinator import Coordinator, FindCoordinatorRequest, FindCoordinatorResponse
from protocol.messages.get_telemetry_subscriptions import (
    GetTelemetrySubscriptionsRequest,
    GetTelemetrySubscriptionsResponse,
)
from protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from protocol.messages.init_producer_id import InitProducerIdRequest, InitProducerIdResponse
from protocol.messages.join_group import (
    JoinGroupRequest,
    JoinGroupRequestProtocol,
    JoinGroupResponse,
    JoinGroupResponseMember,
)
from protocol.messages.leave_group import LeaveGroupRequest, LeaveGroupResponse, MemberIdentity, MemberResponse
from protocol.messages.list_config_resources import (
    ConfigResource,
    ListConfigResourcesRequest,
    ListConfigResourcesResponse,
)
from protocol.messages.list_groups import ListedGroup, ListGroupsRequest, ListGroupsResponse
from protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
    ListOffsetsTopicResponse,
)
from protocol.messages.list_partition_reassignments import (
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
)
from protocol.messages.list_transactions import ListTransactionsRequest, ListTransactionsResponse
from protocol.messages.list_transactions import TransactionState as ListedTransactionState
from protocol.messages.metadata import (
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)
from protocol.messages.offset_delete import (
    OffsetDeleteRequest,
    OffsetDeleteRequestPartition,
    OffsetDeleteRequestTopic,
)
from protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartition,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic,
    OffsetFetchResponseTopics,
)
from protocol.messages.offset_for_leader_epoch import (
    EpochEndOffset,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
    OffsetForLeaderTopicResult,
)
from protocol.messages.produce import LeaderIdAndEpoch as ProduceLeaderIdAndEpoch
from protocol.messages.produce import NodeEndpoint as ProduceNodeEndpoint
from protocol.messages.produce import (
    PartitionProduceData,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
    TopicProduceResponse,
)
from protocol.messages.push_telemetry import PushTelemetryRequest, PushTelemetryResponse
from protocol.messages.request_header import RequestHeader
from protocol.messages.response_header import ResponseHeader
from protocol.messages.sasl_authenticate import SaslAuthenticateRequest, SaslAuthenticateResponse
from protocol.messages.sasl_handshake import SaslHandshakeRequest, SaslHandshakeResponse
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment, SyncGroupResponse
from protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
    TxnOffsetCommitResponse,
    TxnOffsetCommitResponsePartition,
    TxnOffsetCommitResponseTopic,
)
from protocol.messages.write_txn_markers import (
    WritableTxnMarker,
    WritableTxnMarkerPartitionResult,
    WritableTxnMarkerResult,
    WritableTxnMarkerTopic,
    WritableTxnMarkerTopicResult,
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)
from protocol.registry import APIS, ApiKey

TOPIC_ID = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")
TOPIC_ID_BYTES = b"\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\xff"


def header(api_key: int, api_version: int, client_id: str | None = "cli") -> RequestHeader:
    return RequestHeader(
        request_api_key=api_key, request_api_version=api_version, correlation_id=7, client_id=client_id
    )


def sized(frame: bytes) -> bytes:
    """The 4-byte big-endian size prefix a frame travels with."""
    return struct.pack(">i", len(frame)) + frame


def check_request(request_header: RequestHeader, body: Any, frame: bytes) -> None:
    """encode(header, body) == size + frame, and decode(frame) gives back the same header and body."""
    assert encode_request(request_header, body) == sized(frame)
    decoded = decode_request(frame)
    assert decoded.header == request_header
    assert decoded.body == body


def check_response(api_key: int, api_version: int, body: Any, frame: bytes) -> None:
    """encode_response(..., correlation_id=7, body) == size + frame, and decode(frame) gives back the body."""
    assert encode_response(api_key, api_version, 7, body) == sized(frame)
    response_header, decoded = decode_response(api_key, api_version, frame)
    assert response_header == ResponseHeader(correlation_id=7)
    assert decoded == body


# --- Header quirks -------------------------------------------------------------------------------------------


def test_heartbeat_v4_request_golden_with_size_prefix() -> None:
    """The whole frame spelled out, size prefix included: header v2 keeps client_id as an int16 string."""
    body = HeartbeatRequest(group_id="g1", generation_id=5, member_id="m1", group_instance_id=None)
    expected = (
        b"\x00\x00\x00\x1a"  # size = 26 bytes follow
        b"\x00\x0c"  # request_api_key = 12 (Heartbeat)
        b"\x00\x04"  # request_api_version = 4 (flexible -> request header v2)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli": int16 length, NOT a compact string
        b"\x00"  # header tagged fields: none
        b"\x03g1"  # group_id = "g1" (compact: uvarint 2+1)
        b"\x00\x00\x00\x05"  # generation_id = 5
        b"\x03m1"  # member_id = "m1" (compact)
        b"\x00"  # group_instance_id = null (compact null = 0)
        b"\x00"  # body tagged fields: none
    )
    assert encode_request(header(12, 4), body) == expected
    decoded = decode_request(expected[4:])
    assert decoded.header == header(12, 4)
    assert decoded.body == body


def test_request_header_v2_null_client_id_is_int16_minus_one() -> None:
    body = HeartbeatRequest(group_id="g1", generation_id=5, member_id="m1", group_instance_id="i")
    expected = (
        b"\x00\x0c"  # request_api_key = 12 (Heartbeat)
        b"\x00\x04"  # request_api_version = 4 (request header v2)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\xff\xff"  # client_id = null: int16 length -1 (a compact null would be a single 00)
        b"\x00"  # header tagged fields: none
        b"\x03g1"  # group_id = "g1"
        b"\x00\x00\x00\x05"  # generation_id = 5
        b"\x03m1"  # member_id = "m1"
        b"\x02i"  # group_instance_id = "i" (compact nullable: 1+1)
        b"\x00"  # body tagged fields: none
    )
    check_request(header(12, 4, client_id=None), body, expected)


def test_request_header_v1_null_client_id_is_int16_minus_one() -> None:
    body = HeartbeatRequest(group_id="g1", generation_id=5, member_id="m1")
    expected = (
        b"\x00\x0c"  # request_api_key = 12 (Heartbeat)
        b"\x00\x00"  # request_api_version = 0 (not flexible -> request header v1)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\xff\xff"  # client_id = null
        b"\x00\x02g1"  # group_id = "g1" (int16 length)
        b"\x00\x00\x00\x05"  # generation_id = 5
        b"\x00\x02m1"  # member_id = "m1"
    )
    check_request(header(12, 0, client_id=None), body, expected)


def test_request_header_v2_unknown_tagged_field_is_preserved() -> None:
    request_header = header(12, 4)
    request_header.unknown_tagged_fields = {5: b"\xaa\xbb"}
    body = HeartbeatRequest(group_id="g1", generation_id=5, member_id="m1")
    expected = (
        b"\x00\x0c"  # request_api_key = 12 (Heartbeat)
        b"\x00\x04"  # request_api_version = 4
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x01"  # header tagged fields: 1 field
        b"\x05"  # tag = 5 (unknown to RequestHeader.json)
        b"\x02"  # size = 2
        b"\xaa\xbb"  # its raw bytes, kept as they came
        b"\x03g1"  # group_id = "g1"
        b"\x00\x00\x00\x05"  # generation_id = 5
        b"\x03m1"  # member_id = "m1"
        b"\x00"  # group_instance_id = null
        b"\x00"  # body tagged fields: none
    )
    check_request(request_header, body, expected)


def test_heartbeat_v4_response_uses_response_header_v1() -> None:
    body = HeartbeatResponse(throttle_time_ms=0, error_code=27)
    expected = (
        b"\x00\x00\x00\x0c"  # size = 12
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x1b"  # error_code = 27 (REBALANCE_IN_PROGRESS)
        b"\x00"  # body tagged fields: none
    )
    assert encode_response(12, 4, 7, body) == expected
    assert decode_response(12, 4, expected[4:]) == (ResponseHeader(correlation_id=7), body)


def test_heartbeat_v0_response_uses_response_header_v0() -> None:
    body = HeartbeatResponse(error_code=0)
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7 (response header v0: nothing else)
        b"\x00\x00"  # error_code = 0 (v0 has no throttle_time_ms)
    )
    check_response(12, 0, body, expected)


def test_api_versions_v3_response_uses_response_header_v0() -> None:
    body = ApiVersionsResponse(
        error_code=0, api_keys=[ApiVersion(api_key=18, min_version=0, max_version=4)], throttle_time_ms=0
    )
    expected = (
        b"\x00\x00\x00\x13"  # size = 19
        b"\x00\x00\x00\x07"  # correlation_id = 7, and NO header tagged-field byte (header v0 even though v3)
        b"\x00\x00"  # error_code = 0
        b"\x02"  # api_keys: compact array of 1 (1+1)
        b"\x00\x12"  # api_keys[0].api_key = 18
        b"\x00\x00"  # api_keys[0].min_version = 0
        b"\x00\x04"  # api_keys[0].max_version = 4
        b"\x00"  # api_keys[0] tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00"  # body tagged fields: none
    )
    assert encode_response(18, 3, 7, body) == expected
    assert decode_response(18, 3, expected[4:]) == (ResponseHeader(correlation_id=7), body)


def test_api_versions_v4_response_uses_response_header_v0() -> None:
    body = ApiVersionsResponse(error_code=35, api_keys=[], throttle_time_ms=10)
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7, no header tagged fields (header v0)
        b"\x00\x23"  # error_code = 35 (UNSUPPORTED_VERSION)
        b"\x01"  # api_keys: empty compact array (0+1)
        b"\x00\x00\x00\x0a"  # throttle_time_ms = 10
        b"\x00"  # body tagged fields: none
    )
    check_response(18, 4, body, expected)


# --- ApiVersions (18) ----------------------------------------------------------------------------------------


def test_api_versions_v0_request_golden() -> None:
    expected = (
        b"\x00\x12"  # request_api_key = 18 (ApiVersions)
        b"\x00\x00"  # request_api_version = 0 (request header v1)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        # v0 body has no fields at all
    )
    check_request(header(18, 0), ApiVersionsRequest(), expected)


def test_api_versions_v3_request_golden() -> None:
    body = ApiVersionsRequest(client_software_name="grp", client_software_version="0.1")
    expected = (
        b"\x00\x12"  # request_api_key = 18 (ApiVersions)
        b"\x00\x03"  # request_api_version = 3 (flexible -> request header v2)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli" (int16 length)
        b"\x00"  # header tagged fields: none
        b"\x04grp"  # client_software_name = "grp" (compact: 3+1)
        b"\x040.1"  # client_software_version = "0.1" (compact: 3+1)
        b"\x00"  # body tagged fields: none
    )
    check_request(header(18, 3), body, expected)


def test_api_versions_v0_response_golden() -> None:
    body = ApiVersionsResponse(
        error_code=0,
        api_keys=[
            ApiVersion(api_key=12, min_version=0, max_version=4),
            ApiVersion(api_key=18, min_version=0, max_version=4),
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x00"  # error_code = 0
        b"\x00\x00\x00\x02"  # api_keys: int32 count 2
        b"\x00\x0c"  # [0].api_key = 12
        b"\x00\x00"  # [0].min_version = 0
        b"\x00\x04"  # [0].max_version = 4
        b"\x00\x12"  # [1].api_key = 18
        b"\x00\x00"  # [1].min_version = 0
        b"\x00\x04"  # [1].max_version = 4
        # v0 has no throttle_time_ms and no tagged fields
    )
    check_response(18, 0, body, expected)


def test_api_versions_v3_response_known_tagged_fields_and_unknown_tag_golden() -> None:
    """SupportedFeatures (tag 0) and FinalizedFeaturesEpoch (tag 1) are tagged; tag 9 is unknown and kept."""
    body = ApiVersionsResponse(
        error_code=0,
        api_keys=[],
        throttle_time_ms=0,
        supported_features=[SupportedFeatureKey(name="group.version", min_version=0, max_version=1)],
        finalized_features_epoch=5,
        unknown_tagged_fields={9: b"\x01\x02"},
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7 (header v0)
        b"\x00\x00"  # error_code = 0
        b"\x01"  # api_keys: empty compact array
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x03"  # body tagged fields: 3 fields, ascending tags
        b"\x00"  # tag 0 = SupportedFeatures
        b"\x14"  # size = 20
        b"\x02"  # supported_features: compact array of 1
        b"\x0egroup.version"  # [0].name = "group.version" (compact: 13+1)
        b"\x00\x00"  # [0].min_version = 0
        b"\x00\x01"  # [0].max_version = 1
        b"\x00"  # [0] tagged fields: none
        b"\x01"  # tag 1 = FinalizedFeaturesEpoch
        b"\x08"  # size = 8
        b"\x00\x00\x00\x00\x00\x00\x00\x05"  # finalized_features_epoch = 5 (int64)
        b"\x09"  # tag 9: unknown to ApiVersionsResponse v3
        b"\x02"  # size = 2
        b"\x01\x02"  # raw bytes, preserved in unknown_tagged_fields and re-sent
    )
    check_response(18, 3, body, expected)


def test_api_versions_v3_response_default_tagged_fields_are_omitted() -> None:
    """finalized_features_epoch = -1 and an empty supported_features are the defaults: no tag is written."""
    body = ApiVersionsResponse(api_keys=[], finalized_features_epoch=-1, supported_features=[])
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7 (header v0)
        b"\x00\x00"  # error_code = 0
        b"\x01"  # api_keys: empty compact array
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00"  # body tagged fields: none
    )
    check_response(18, 3, body, expected)


# --- Metadata (3) --------------------------------------------------------------------------------------------


def test_metadata_v1_request_golden() -> None:
    body = MetadataRequest(topics=[MetadataRequestTopic(name="t1")])
    expected = (
        b"\x00\x03"  # request_api_key = 3 (Metadata)
        b"\x00\x01"  # request_api_version = 1
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x00\x00\x01"  # topics: int32 count 1
        b"\x00\x02t1"  # topics[0].name = "t1"
    )
    check_request(header(3, 1), body, expected)


def test_metadata_v1_request_null_topics_means_all_golden() -> None:
    expected = (
        b"\x00\x03"  # request_api_key = 3 (Metadata)
        b"\x00\x01"  # request_api_version = 1
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\xff\xff\xff\xff"  # topics = null (all topics; nullable from v1)
    )
    check_request(header(3, 1), MetadataRequest(topics=None), expected)


def test_metadata_v12_request_golden() -> None:
    body = MetadataRequest(
        topics=[MetadataRequestTopic(topic_id=TOPIC_ID, name="t1")],
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=True,
    )
    expected = (
        b"\x00\x03"  # request_api_key = 3 (Metadata)
        b"\x00\x0c"  # request_api_version = 12 (flexible -> request header v2)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x02"  # topics: compact array of 1
        + TOPIC_ID_BYTES  # topics[0].topic_id (uuid, 16 bytes)
        + b"\x03t1"  # topics[0].name = "t1" (compact nullable)
        b"\x00"  # topics[0] tagged fields: none
        b"\x00"  # allow_auto_topic_creation = false
        # include_cluster_authorized_operations exists only in v8-10
        b"\x01"  # include_topic_authorized_operations = true
        b"\x00"  # body tagged fields: none
    )
    check_request(header(3, 12), body, expected)


def test_metadata_v9_response_golden() -> None:
    body = MetadataResponse(
        throttle_time_ms=0,
        brokers=[MetadataResponseBroker(node_id=1, host="h", port=9092, rack=None)],
        cluster_id="c",
        controller_id=1,
        topics=[
            MetadataResponseTopic(
                error_code=0,
                name="t1",
                is_internal=False,
                partitions=[
                    MetadataResponsePartition(
                        error_code=0,
                        partition_index=0,
                        leader_id=1,
                        leader_epoch=2,
                        replica_nodes=[1],
                        isr_nodes=[1],
                        offline_replicas=[],
                    )
                ],
                topic_authorized_operations=-2147483648,
            )
        ],
        cluster_authorized_operations=-2147483648,
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x02"  # brokers: compact array of 1
        b"\x00\x00\x00\x01"  # brokers[0].node_id = 1
        b"\x02h"  # brokers[0].host = "h"
        b"\x00\x00\x23\x84"  # brokers[0].port = 9092
        b"\x00"  # brokers[0].rack = null
        b"\x00"  # brokers[0] tagged fields: none
        b"\x02c"  # cluster_id = "c"
        b"\x00\x00\x00\x01"  # controller_id = 1
        b"\x02"  # topics: compact array of 1
        b"\x00\x00"  # topics[0].error_code = 0
        b"\x03t1"  # topics[0].name = "t1" (no topic_id before v10)
        b"\x00"  # topics[0].is_internal = false
        b"\x02"  # topics[0].partitions: compact array of 1
        b"\x00\x00"  # .error_code = 0
        b"\x00\x00\x00\x00"  # .partition_index = 0
        b"\x00\x00\x00\x01"  # .leader_id = 1
        b"\x00\x00\x00\x02"  # .leader_epoch = 2
        b"\x02\x00\x00\x00\x01"  # .replica_nodes = [1] (compact int32 array)
        b"\x02\x00\x00\x00\x01"  # .isr_nodes = [1]
        b"\x01"  # .offline_replicas = []
        b"\x00"  # partition tagged fields: none
        b"\x80\x00\x00\x00"  # topics[0].topic_authorized_operations = INT32_MIN (not requested)
        b"\x00"  # topics[0] tagged fields: none
        b"\x80\x00\x00\x00"  # cluster_authorized_operations = INT32_MIN (v8-10 only)
        b"\x00"  # body tagged fields: none
    )
    check_response(3, 9, body, expected)


# --- FindCoordinator (10) ------------------------------------------------------------------------------------


def test_find_coordinator_v0_request_golden() -> None:
    expected = (
        b"\x00\x0a"  # request_api_key = 10 (FindCoordinator)
        b"\x00\x00"  # request_api_version = 0
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x02g1"  # key = "g1" (key_type exists from v1)
    )
    check_request(header(10, 0), FindCoordinatorRequest(key="g1"), expected)


def test_find_coordinator_v4_request_golden() -> None:
    body = FindCoordinatorRequest(key_type=0, coordinator_keys=["g1", "g2"])
    expected = (
        b"\x00\x0a"  # request_api_key = 10 (FindCoordinator)
        b"\x00\x04"  # request_api_version = 4 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x00"  # key_type = 0 (GROUP), int8
        b"\x03"  # coordinator_keys: compact array of 2
        b"\x03g1"  # [0] = "g1"
        b"\x03g2"  # [1] = "g2"
        b"\x00"  # body tagged fields: none
    )
    check_request(header(10, 4), body, expected)


def test_find_coordinator_v0_response_golden() -> None:
    body = FindCoordinatorResponse(error_code=0, node_id=1, host="broker", port=9092)
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x00"  # error_code = 0
        b"\x00\x00\x00\x01"  # node_id = 1
        b"\x00\x06broker"  # host = "broker"
        b"\x00\x00\x23\x84"  # port = 9092
    )
    check_response(10, 0, body, expected)


def test_find_coordinator_v4_response_golden() -> None:
    body = FindCoordinatorResponse(
        throttle_time_ms=0,
        coordinators=[Coordinator(key="g1", node_id=1, host="h", port=9092, error_code=0, error_message=None)],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0 (the single-coordinator fields end at v3)
        b"\x02"  # coordinators: compact array of 1
        b"\x03g1"  # [0].key = "g1"
        b"\x00\x00\x00\x01"  # [0].node_id = 1
        b"\x02h"  # [0].host = "h"
        b"\x00\x00\x23\x84"  # [0].port = 9092
        b"\x00\x00"  # [0].error_code = 0
        b"\x00"  # [0].error_message = null
        b"\x00"  # [0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(10, 4, body, expected)


# --- JoinGroup (11) ------------------------------------------------------------------------------------------


def test_join_group_v5_request_golden() -> None:
    body = JoinGroupRequest(
        group_id="g1",
        session_timeout_ms=10000,
        rebalance_timeout_ms=30000,
        member_id="",
        group_instance_id=None,
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=b"\x01\x02\x03")],
    )
    expected = (
        b"\x00\x0b"  # request_api_key = 11 (JoinGroup)
        b"\x00\x05"  # request_api_version = 5 (not flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x02g1"  # group_id = "g1"
        b"\x00\x00\x27\x10"  # session_timeout_ms = 10000
        b"\x00\x00\x75\x30"  # rebalance_timeout_ms = 30000
        b"\x00\x00"  # member_id = "" (empty, not null)
        b"\xff\xff"  # group_instance_id = null
        b"\x00\x08consumer"  # protocol_type = "consumer"
        b"\x00\x00\x00\x01"  # protocols: int32 count 1
        b"\x00\x05range"  # protocols[0].name = "range"
        b"\x00\x00\x00\x03\x01\x02\x03"  # protocols[0].metadata = 01 02 03 (int32 length)
    )
    check_request(header(11, 5), body, expected)


def test_join_group_v9_request_golden() -> None:
    body = JoinGroupRequest(
        group_id="g1",
        session_timeout_ms=10000,
        rebalance_timeout_ms=30000,
        member_id="",
        group_instance_id="i",
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=b"\x01\x02\x03")],
        reason="r",
    )
    expected = (
        b"\x00\x0b"  # request_api_key = 11 (JoinGroup)
        b"\x00\x09"  # request_api_version = 9 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03g1"  # group_id = "g1"
        b"\x00\x00\x27\x10"  # session_timeout_ms = 10000
        b"\x00\x00\x75\x30"  # rebalance_timeout_ms = 30000
        b"\x01"  # member_id = "" (compact: 0+1; 00 would be null)
        b"\x02i"  # group_instance_id = "i"
        b"\x09consumer"  # protocol_type = "consumer" (8+1)
        b"\x02"  # protocols: compact array of 1
        b"\x06range"  # protocols[0].name = "range"
        b"\x04\x01\x02\x03"  # protocols[0].metadata = 01 02 03 (compact bytes: 3+1)
        b"\x00"  # protocols[0] tagged fields: none
        b"\x02r"  # reason = "r" (v8+)
        b"\x00"  # body tagged fields: none
    )
    check_request(header(11, 9), body, expected)


def test_join_group_v5_response_golden() -> None:
    body = JoinGroupResponse(
        throttle_time_ms=0,
        error_code=0,
        generation_id=1,
        protocol_name="range",
        leader="m1",
        member_id="m1",
        members=[JoinGroupResponseMember(member_id="m1", group_instance_id=None, metadata=b"\x01")],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7 (response header v0)
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0
        b"\x00\x00\x00\x01"  # generation_id = 1
        b"\x00\x05range"  # protocol_name = "range" (not nullable before v7; no protocol_type before v7)
        b"\x00\x02m1"  # leader = "m1"
        b"\x00\x02m1"  # member_id = "m1"
        b"\x00\x00\x00\x01"  # members: int32 count 1
        b"\x00\x02m1"  # members[0].member_id = "m1"
        b"\xff\xff"  # members[0].group_instance_id = null
        b"\x00\x00\x00\x01\x01"  # members[0].metadata = 01 (int32 length)
    )
    check_response(11, 5, body, expected)


def test_join_group_v9_response_golden() -> None:
    body = JoinGroupResponse(
        throttle_time_ms=0,
        error_code=0,
        generation_id=1,
        protocol_type="consumer",
        protocol_name="range",
        leader="m1",
        skip_assignment=False,
        member_id="m2",
        members=[],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0
        b"\x00\x00\x00\x01"  # generation_id = 1
        b"\x09consumer"  # protocol_type = "consumer" (v7+, nullable)
        b"\x06range"  # protocol_name = "range" (nullable from v7)
        b"\x03m1"  # leader = "m1"
        b"\x00"  # skip_assignment = false (v9+)
        b"\x03m2"  # member_id = "m2"
        b"\x01"  # members = [] (a follower gets no member list)
        b"\x00"  # body tagged fields: none
    )
    check_response(11, 9, body, expected)


# --- SyncGroup (14) ------------------------------------------------------------------------------------------


def test_sync_group_v3_request_golden() -> None:
    body = SyncGroupRequest(
        group_id="g1",
        generation_id=5,
        member_id="m1",
        group_instance_id=None,
        assignments=[SyncGroupRequestAssignment(member_id="m1", assignment=b"\xaa\xbb")],
    )
    expected = (
        b"\x00\x0e"  # request_api_key = 14 (SyncGroup)
        b"\x00\x03"  # request_api_version = 3 (not flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x02g1"  # group_id = "g1"
        b"\x00\x00\x00\x05"  # generation_id = 5
        b"\x00\x02m1"  # member_id = "m1"
        b"\xff\xff"  # group_instance_id = null
        b"\x00\x00\x00\x01"  # assignments: int32 count 1
        b"\x00\x02m1"  # assignments[0].member_id = "m1"
        b"\x00\x00\x00\x02\xaa\xbb"  # assignments[0].assignment = aa bb (int32 length)
    )
    check_request(header(14, 3), body, expected)


def test_sync_group_v5_request_golden() -> None:
    body = SyncGroupRequest(
        group_id="g1",
        generation_id=5,
        member_id="m2",
        group_instance_id=None,
        protocol_type="consumer",
        protocol_name="range",
        assignments=[],
    )
    expected = (
        b"\x00\x0e"  # request_api_key = 14 (SyncGroup)
        b"\x00\x05"  # request_api_version = 5 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03g1"  # group_id = "g1"
        b"\x00\x00\x00\x05"  # generation_id = 5
        b"\x03m2"  # member_id = "m2"
        b"\x00"  # group_instance_id = null
        b"\x09consumer"  # protocol_type = "consumer"
        b"\x06range"  # protocol_name = "range"
        b"\x01"  # assignments: empty compact array (a follower)
        b"\x00"  # body tagged fields: none
    )
    check_request(header(14, 5), body, expected)


def test_sync_group_v0_response_golden() -> None:
    body = SyncGroupResponse(error_code=0, assignment=b"\xaa\xbb")
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x00"  # error_code = 0 (throttle_time_ms from v1)
        b"\x00\x00\x00\x02\xaa\xbb"  # assignment = aa bb (int32 length)
    )
    check_response(14, 0, body, expected)


def test_sync_group_v5_response_golden() -> None:
    body = SyncGroupResponse(
        throttle_time_ms=0, error_code=0, protocol_type="consumer", protocol_name="range", assignment=b"\xaa\xbb"
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0
        b"\x09consumer"  # protocol_type = "consumer" (v5+)
        b"\x06range"  # protocol_name = "range" (v5+)
        b"\x03\xaa\xbb"  # assignment = aa bb (compact bytes: 2+1)
        b"\x00"  # body tagged fields: none
    )
    check_response(14, 5, body, expected)


# --- Heartbeat (12) ------------------------------------------------------------------------------------------


def test_heartbeat_v0_request_golden() -> None:
    body = HeartbeatRequest(group_id="g1", generation_id=5, member_id="m1")
    expected = (
        b"\x00\x0c"  # request_api_key = 12 (Heartbeat)
        b"\x00\x00"  # request_api_version = 0
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x02g1"  # group_id = "g1"
        b"\x00\x00\x00\x05"  # generation_id = 5
        b"\x00\x02m1"  # member_id = "m1" (group_instance_id exists from v3)
    )
    check_request(header(12, 0), body, expected)


def test_heartbeat_v4_request_string_lengths_count_utf8_bytes_golden() -> None:
    body = HeartbeatRequest(group_id="é", generation_id=1, member_id="€")
    expected = (
        b"\x00\x0c"  # request_api_key = 12 (Heartbeat)
        b"\x00\x04"  # request_api_version = 4
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03\xc3\xa9"  # group_id = "é": 2 UTF-8 bytes, so compact length 2+1 (not 1+1)
        b"\x00\x00\x00\x01"  # generation_id = 1
        b"\x04\xe2\x82\xac"  # member_id = "€": 3 UTF-8 bytes, compact length 3+1
        b"\x00"  # group_instance_id = null
        b"\x00"  # body tagged fields: none
    )
    check_request(header(12, 4), body, expected)


def test_heartbeat_v4_request_golden() -> None:
    body = HeartbeatRequest(group_id="g1", generation_id=-1, member_id="m1", group_instance_id="i")
    expected = (
        b"\x00\x0c"  # request_api_key = 12 (Heartbeat)
        b"\x00\x04"  # request_api_version = 4 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03g1"  # group_id = "g1"
        b"\xff\xff\xff\xff"  # generation_id = -1
        b"\x03m1"  # member_id = "m1"
        b"\x02i"  # group_instance_id = "i"
        b"\x00"  # body tagged fields: none
    )
    check_request(header(12, 4), body, expected)


# --- LeaveGroup (13) -----------------------------------------------------------------------------------------


def test_leave_group_v0_request_golden() -> None:
    expected = (
        b"\x00\x0d"  # request_api_key = 13 (LeaveGroup)
        b"\x00\x00"  # request_api_version = 0
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x02g1"  # group_id = "g1"
        b"\x00\x02m1"  # member_id = "m1" (v0-2; a members array from v3)
    )
    check_request(header(13, 0), LeaveGroupRequest(group_id="g1", member_id="m1"), expected)


def test_leave_group_v5_request_golden() -> None:
    body = LeaveGroupRequest(
        group_id="g1",
        members=[MemberIdentity(member_id="m1", group_instance_id=None, reason="bye")],
    )
    expected = (
        b"\x00\x0d"  # request_api_key = 13 (LeaveGroup)
        b"\x00\x05"  # request_api_version = 5 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03g1"  # group_id = "g1"
        b"\x02"  # members: compact array of 1
        b"\x03m1"  # members[0].member_id = "m1"
        b"\x00"  # members[0].group_instance_id = null
        b"\x04bye"  # members[0].reason = "bye"
        b"\x00"  # members[0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_request(header(13, 5), body, expected)


def test_leave_group_v5_response_golden() -> None:
    body = LeaveGroupResponse(
        throttle_time_ms=0,
        error_code=0,
        members=[MemberResponse(member_id="m1", group_instance_id=None, error_code=25)],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0
        b"\x02"  # members: compact array of 1
        b"\x03m1"  # members[0].member_id = "m1"
        b"\x00"  # members[0].group_instance_id = null
        b"\x00\x19"  # members[0].error_code = 25 (UNKNOWN_MEMBER_ID)
        b"\x00"  # members[0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(13, 5, body, expected)


# --- OffsetCommit (8) ----------------------------------------------------------------------------------------


def test_offset_commit_v2_request_golden() -> None:
    body = OffsetCommitRequest(
        group_id="g1",
        generation_id_or_member_epoch=5,
        member_id="m1",
        retention_time_ms=-1,
        topics=[
            OffsetCommitRequestTopic(
                name="t1",
                partitions=[
                    OffsetCommitRequestPartition(partition_index=0, committed_offset=100, committed_metadata=None)
                ],
            )
        ],
    )
    expected = (
        b"\x00\x08"  # request_api_key = 8 (OffsetCommit)
        b"\x00\x02"  # request_api_version = 2 (not flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x02g1"  # group_id = "g1"
        b"\x00\x00\x00\x05"  # generation_id_or_member_epoch = 5
        b"\x00\x02m1"  # member_id = "m1"
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # retention_time_ms = -1 (v2-4 only)
        b"\x00\x00\x00\x01"  # topics: int32 count 1
        b"\x00\x02t1"  # topics[0].name = "t1"
        b"\x00\x00\x00\x01"  # topics[0].partitions: int32 count 1
        b"\x00\x00\x00\x00"  # .partition_index = 0
        b"\x00\x00\x00\x00\x00\x00\x00\x64"  # .committed_offset = 100
        b"\xff\xff"  # .committed_metadata = null
    )
    check_request(header(8, 2), body, expected)


def test_offset_commit_v8_request_golden() -> None:
    body = OffsetCommitRequest(
        group_id="g1",
        generation_id_or_member_epoch=5,
        member_id="m1",
        group_instance_id=None,
        topics=[
            OffsetCommitRequestTopic(
                name="t1",
                partitions=[
                    OffsetCommitRequestPartition(
                        partition_index=0, committed_offset=100, committed_leader_epoch=3, committed_metadata=""
                    )
                ],
            )
        ],
    )
    expected = (
        b"\x00\x08"  # request_api_key = 8 (OffsetCommit)
        b"\x00\x08"  # request_api_version = 8 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03g1"  # group_id = "g1"
        b"\x00\x00\x00\x05"  # generation_id_or_member_epoch = 5
        b"\x03m1"  # member_id = "m1"
        b"\x00"  # group_instance_id = null
        b"\x02"  # topics: compact array of 1
        b"\x03t1"  # topics[0].name = "t1"
        b"\x02"  # topics[0].partitions: compact array of 1
        b"\x00\x00\x00\x00"  # .partition_index = 0
        b"\x00\x00\x00\x00\x00\x00\x00\x64"  # .committed_offset = 100
        b"\x00\x00\x00\x03"  # .committed_leader_epoch = 3
        b"\x01"  # .committed_metadata = "" (compact: 0+1)
        b"\x00"  # partition tagged fields: none
        b"\x00"  # topic tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_request(header(8, 8), body, expected)


def test_offset_commit_v8_response_golden() -> None:
    body = OffsetCommitResponse(
        throttle_time_ms=0,
        topics=[
            OffsetCommitResponseTopic(
                name="t1", partitions=[OffsetCommitResponsePartition(partition_index=0, error_code=22)]
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x02"  # topics: compact array of 1
        b"\x03t1"  # topics[0].name = "t1"
        b"\x02"  # topics[0].partitions: compact array of 1
        b"\x00\x00\x00\x00"  # .partition_index = 0
        b"\x00\x16"  # .error_code = 22 (ILLEGAL_GENERATION)
        b"\x00"  # partition tagged fields: none
        b"\x00"  # topic tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(8, 8, body, expected)


def test_offset_commit_v10_request_and_response_by_topic_id_golden() -> None:
    """v10 (KIP-848) names topics by a 16-byte id in place of the name, in the request and the response."""
    topic_id = uuid.UUID(bytes=bytes(range(1, 17)))
    body = OffsetCommitRequest(
        group_id="g1",
        generation_id_or_member_epoch=5,
        member_id="m1",
        group_instance_id=None,
        topics=[
            OffsetCommitRequestTopic(
                topic_id=topic_id,
                partitions=[
                    OffsetCommitRequestPartition(
                        partition_index=0, committed_offset=100, committed_leader_epoch=3, committed_metadata=""
                    )
                ],
            )
        ],
    )
    expected = (
        b"\x00\x08"  # request_api_key = 8 (OffsetCommit)
        b"\x00\x0a"  # request_api_version = 10 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03g1"  # group_id = "g1"
        b"\x00\x00\x00\x05"  # generation_id_or_member_epoch = 5
        b"\x03m1"  # member_id = "m1"
        b"\x00"  # group_instance_id = null
        b"\x02"  # topics: compact array of 1
        b"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10"  # topics[0].topic_id (v10+; no name)
        b"\x02"  # topics[0].partitions: compact array of 1
        b"\x00\x00\x00\x00"  # .partition_index = 0
        b"\x00\x00\x00\x00\x00\x00\x00\x64"  # .committed_offset = 100
        b"\x00\x00\x00\x03"  # .committed_leader_epoch = 3
        b"\x01"  # .committed_metadata = "" (compact: 0+1)
        b"\x00"  # partition tagged fields: none
        b"\x00"  # topic tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_request(header(8, 10), body, expected)
    response = OffsetCommitResponse(
        throttle_time_ms=0,
        topics=[
            OffsetCommitResponseTopic(
                topic_id=topic_id, partitions=[OffsetCommitResponsePartition(partition_index=0, error_code=100)]
            )
        ],
    )
    answer = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x02"  # topics: compact array of 1
        b"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10"  # topics[0].topic_id (v10+; no name)
        b"\x02"  # topics[0].partitions: compact array of 1
        b"\x00\x00\x00\x00"  # .partition_index = 0
        b"\x00\x64"  # .error_code = 100 (UNKNOWN_b"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10")
        b"\x00"  # partition tagged fields: none
        b"\x00"  # topic tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(8, 10, response, answer)


# --- OffsetFetch (9) -----------------------------------------------------------------------------------------


def test_offset_fetch_v1_request_golden() -> None:
    body = OffsetFetchRequest(group_id="g1", topics=[OffsetFetchRequestTopic(name="t1", partition_indexes=[0, 1])])
    expected = (
        b"\x00\x09"  # request_api_key = 9 (OffsetFetch)
        b"\x00\x01"  # request_api_version = 1
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x02g1"  # group_id = "g1"
        b"\x00\x00\x00\x01"  # topics: int32 count 1
        b"\x00\x02t1"  # topics[0].name = "t1"
        b"\x00\x00\x00\x02"  # topics[0].partition_indexes: int32 count 2
        b"\x00\x00\x00\x00"  # [0] = 0
        b"\x00\x00\x00\x01"  # [1] = 1
    )
    check_request(header(9, 1), body, expected)


def test_offset_fetch_v7_request_null_topics_golden() -> None:
    body = OffsetFetchRequest(group_id="g1", topics=None, require_stable=True)
    expected = (
        b"\x00\x09"  # request_api_key = 9 (OffsetFetch)
        b"\x00\x07"  # request_api_version = 7 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03g1"  # group_id = "g1"
        b"\x00"  # topics = null: every committed offset of the group (compact null)
        b"\x01"  # require_stable = true
        b"\x00"  # body tagged fields: none
    )
    check_request(header(9, 7), body, expected)


def test_offset_fetch_v9_request_golden() -> None:
    body = OffsetFetchRequest(
        groups=[
            OffsetFetchRequestGroup(
                group_id="g1",
                member_id="m1",
                member_epoch=3,
                topics=[OffsetFetchRequestTopics(name="t1", partition_indexes=[0])],
            )
        ],
        require_stable=False,
    )
    expected = (
        b"\x00\x09"  # request_api_key = 9 (OffsetFetch)
        b"\x00\x09"  # request_api_version = 9 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x02"  # groups: compact array of 1 (group_id/topics at top level end at v7)
        b"\x03g1"  # groups[0].group_id = "g1"
        b"\x03m1"  # groups[0].member_id = "m1" (v9+)
        b"\x00\x00\x00\x03"  # groups[0].member_epoch = 3 (v9+)
        b"\x02"  # groups[0].topics: compact array of 1
        b"\x03t1"  # .name = "t1"
        b"\x02\x00\x00\x00\x00"  # .partition_indexes = [0]
        b"\x00"  # topic tagged fields: none
        b"\x00"  # group tagged fields: none
        b"\x00"  # require_stable = false
        b"\x00"  # body tagged fields: none
    )
    check_request(header(9, 9), body, expected)


def test_offset_fetch_v10_request_by_topic_id_golden() -> None:
    """v10 (KIP-848) names each group's topics by id in place of the name."""
    body = OffsetFetchRequest(
        groups=[
            OffsetFetchRequestGroup(
                group_id="g1",
                member_id="m1",
                member_epoch=3,
                topics=[OffsetFetchRequestTopics(topic_id=uuid.UUID(bytes=bytes(range(1, 17))), partition_indexes=[0])],
            )
        ],
        require_stable=True,
    )
    expected = (
        b"\x00\x09"  # request_api_key = 9 (OffsetFetch)
        b"\x00\x0a"  # request_api_version = 10 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x02"  # groups: compact array of 1
        b"\x03g1"  # groups[0].group_id = "g1"
        b"\x03m1"  # groups[0].member_id = "m1"
        b"\x00\x00\x00\x03"  # groups[0].member_epoch = 3
        b"\x02"  # groups[0].topics: compact array of 1
        b"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10"  # .topic_id (v10+; no name)
        b"\x02\x00\x00\x00\x00"  # .partition_indexes = [0]
        b"\x00"  # topic tagged fields: none
        b"\x00"  # group tagged fields: none
        b"\x01"  # require_stable = true
        b"\x00"  # body tagged fields: none
    )
    check_request(header(9, 10), body, expected)


def test_offset_fetch_v1_response_golden() -> None:
    body = OffsetFetchResponse(
        topics=[
            OffsetFetchResponseTopic(
                name="t1",
                partitions=[
                    OffsetFetchResponsePartition(partition_index=0, committed_offset=100, metadata="", error_code=0),
                    OffsetFetchResponsePartition(partition_index=1, committed_offset=-1, metadata=None, error_code=0),
                ],
            )
        ]
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x00\x00\x01"  # topics: int32 count 1 (throttle_time_ms from v3)
        b"\x00\x02t1"  # topics[0].name = "t1"
        b"\x00\x00\x00\x02"  # topics[0].partitions: int32 count 2
        b"\x00\x00\x00\x00"  # [0].partition_index = 0
        b"\x00\x00\x00\x00\x00\x00\x00\x64"  # [0].committed_offset = 100 (leader epoch from v5)
        b"\x00\x00"  # [0].metadata = ""
        b"\x00\x00"  # [0].error_code = 0
        b"\x00\x00\x00\x01"  # [1].partition_index = 1
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # [1].committed_offset = -1 (nothing committed)
        b"\xff\xff"  # [1].metadata = null
        b"\x00\x00"  # [1].error_code = 0
        # the top-level error_code exists from v2
    )
    check_response(9, 1, body, expected)


def test_offset_fetch_v8_response_golden() -> None:
    body = OffsetFetchResponse(
        throttle_time_ms=0,
        groups=[
            OffsetFetchResponseGroup(
                group_id="g1",
                topics=[
                    OffsetFetchResponseTopics(
                        name="t1",
                        partitions=[
                            OffsetFetchResponsePartitions(
                                partition_index=0,
                                committed_offset=100,
                                committed_leader_epoch=3,
                                metadata="",
                                error_code=0,
                            )
                        ],
                    )
                ],
                error_code=0,
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0 (top-level topics/error_code end at v7)
        b"\x02"  # groups: compact array of 1
        b"\x03g1"  # groups[0].group_id = "g1"
        b"\x02"  # groups[0].topics: compact array of 1
        b"\x03t1"  # .name = "t1"
        b"\x02"  # .partitions: compact array of 1
        b"\x00\x00\x00\x00"  # .partition_index = 0
        b"\x00\x00\x00\x00\x00\x00\x00\x64"  # .committed_offset = 100
        b"\x00\x00\x00\x03"  # .committed_leader_epoch = 3
        b"\x01"  # .metadata = ""
        b"\x00\x00"  # .error_code = 0
        b"\x00"  # partition tagged fields: none
        b"\x00"  # topic tagged fields: none
        b"\x00\x00"  # groups[0].error_code = 0
        b"\x00"  # group tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(9, 8, body, expected)


# --- DescribeGroups (15) -------------------------------------------------------------------------------------


def test_describe_groups_v5_request_golden() -> None:
    body = DescribeGroupsRequest(groups=["g1", "g2"], include_authorized_operations=True)
    expected = (
        b"\x00\x0f"  # request_api_key = 15 (DescribeGroups)
        b"\x00\x05"  # request_api_version = 5 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03"  # groups: compact array of 2
        b"\x03g1"  # [0] = "g1"
        b"\x03g2"  # [1] = "g2"
        b"\x01"  # include_authorized_operations = true
        b"\x00"  # body tagged fields: none
    )
    check_request(header(15, 5), body, expected)


def test_describe_groups_v5_response_golden() -> None:
    body = DescribeGroupsResponse(
        throttle_time_ms=0,
        groups=[
            DescribedGroup(
                error_code=0,
                group_id="g1",
                group_state="Stable",
                protocol_type="consumer",
                protocol_data="range",
                members=[
                    DescribedGroupMember(
                        member_id="m1",
                        group_instance_id=None,
                        client_id="cli",
                        client_host="/h",
                        member_metadata=b"\x01",
                        member_assignment=b"",
                    )
                ],
                authorized_operations=-2147483648,
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x02"  # groups: compact array of 1
        b"\x00\x00"  # groups[0].error_code = 0
        b"\x03g1"  # .group_id = "g1"
        b"\x07Stable"  # .group_state = "Stable"
        b"\x09consumer"  # .protocol_type = "consumer"
        b"\x06range"  # .protocol_data = "range"
        b"\x02"  # .members: compact array of 1
        b"\x03m1"  # members[0].member_id = "m1"
        b"\x00"  # members[0].group_instance_id = null (v4+)
        b"\x04cli"  # members[0].client_id = "cli"
        b"\x03/h"  # members[0].client_host = "/h"
        b"\x02\x01"  # members[0].member_metadata = 01 (compact bytes)
        b"\x01"  # members[0].member_assignment = empty (compact bytes)
        b"\x00"  # members[0] tagged fields: none
        b"\x80\x00\x00\x00"  # .authorized_operations = INT32_MIN (not requested)
        b"\x00"  # groups[0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(15, 5, body, expected)


def test_describe_groups_v6_response_golden() -> None:
    """v6 (KIP-1043) adds a nullable error message per group after the error code."""
    body = DescribeGroupsResponse(
        throttle_time_ms=0,
        groups=[
            DescribedGroup(
                error_code=69,
                error_message="no",
                group_id="g1",
                group_state="Dead",
                protocol_type="",
                protocol_data="",
                members=[],
                authorized_operations=-2147483648,
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x02"  # groups: compact array of 1
        b"\x00\x45"  # groups[0].error_code = 69 (GROUP_ID_NOT_FOUND)
        b"\x03no"  # .error_message = "no" (v6+)
        b"\x03g1"  # .group_id = "g1"
        b"\x05Dead"  # .group_state = "Dead"
        b"\x01"  # .protocol_type = ""
        b"\x01"  # .protocol_data = ""
        b"\x01"  # .members: compact array of 0
        b"\x80\x00\x00\x00"  # .authorized_operations = INT32_MIN (not requested)
        b"\x00"  # groups[0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(15, 6, body, expected)


# --- ListGroups (16) -----------------------------------------------------------------------------------------


def test_list_groups_v5_request_golden() -> None:
    body = ListGroupsRequest(states_filter=["Stable"], types_filter=["classic"])
    expected = (
        b"\x00\x10"  # request_api_key = 16 (ListGroups)
        b"\x00\x05"  # request_api_version = 5 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x02"  # states_filter: compact array of 1
        b"\x07Stable"  # [0] = "Stable"
        b"\x02"  # types_filter: compact array of 1
        b"\x08classic"  # [0] = "classic"
        b"\x00"  # body tagged fields: none
    )
    check_request(header(16, 5), body, expected)


def test_list_groups_v0_response_golden() -> None:
    body = ListGroupsResponse(error_code=0, groups=[ListedGroup(group_id="g1", protocol_type="consumer")])
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x00"  # error_code = 0 (throttle_time_ms from v1)
        b"\x00\x00\x00\x01"  # groups: int32 count 1
        b"\x00\x02g1"  # groups[0].group_id = "g1"
        b"\x00\x08consumer"  # groups[0].protocol_type = "consumer"
    )
    check_response(16, 0, body, expected)


# --- DeleteGroups (42) ---------------------------------------------------------------------------------------


def test_delete_groups_v2_request_golden() -> None:
    expected = (
        b"\x00\x2a"  # request_api_key = 42 (DeleteGroups)
        b"\x00\x02"  # request_api_version = 2 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x02"  # groups_names: compact array of 1
        b"\x03g1"  # [0] = "g1"
        b"\x00"  # body tagged fields: none
    )
    check_request(header(42, 2), DeleteGroupsRequest(groups_names=["g1"]), expected)


def test_delete_groups_v2_request_multi_byte_varints_golden() -> None:
    """Compact lengths, tags and tag sizes of 128 and up take two uvarint bytes (7 bits each, low group first)."""
    long_name = "g" * 130
    payload = b"\x5a" * 128
    body = DeleteGroupsRequest(groups_names=[long_name], unknown_tagged_fields={200: payload})
    expected = (
        (
            b"\x00\x2a"  # request_api_key = 42 (DeleteGroups)
            b"\x00\x02"  # request_api_version = 2 (flexible)
            b"\x00\x00\x00\x07"  # correlation_id = 7
            b"\x00\x03cli"  # client_id = "cli"
            b"\x00"  # header tagged fields: none
            b"\x02"  # groups_names: compact array of 1
            b"\x83\x01"  # [0] length: 130+1 = 131 -> (131 & 0x7f) | 0x80 = 0x83, then 131 >> 7 = 0x01
        )
        + long_name.encode()  # [0] = "ggg...g" (130 bytes)
        + (
            b"\x01"  # body tagged fields: 1 field
            b"\xc8\x01"  # tag = 200 -> (200 & 0x7f) | 0x80 = 0xc8, then 200 >> 7 = 0x01 (unknown tag)
            b"\x80\x01"  # size = 128 -> (128 & 0x7f) | 0x80 = 0x80, then 128 >> 7 = 0x01
        )
        + payload  # the unknown tag's 128 raw bytes
    )
    check_request(header(42, 2), body, expected)


def test_delete_groups_v3_response_golden() -> None:
    """v3 adds a nullable error message per group result, after the error code."""
    body = DeleteGroupsResponse(
        throttle_time_ms=0,
        results=[
            DeletableGroupResult(group_id="g1", error_code=0, error_message=None),
            DeletableGroupResult(group_id="g2", error_code=68, error_message="busy"),
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x03"  # results: compact array of 2
        b"\x03g1"  # results[0].group_id = "g1"
        b"\x00\x00"  # results[0].error_code = 0
        b"\x00"  # results[0].error_message = null (v3+)
        b"\x00"  # results[0] tagged fields: none
        b"\x03g2"  # results[1].group_id = "g2"
        b"\x00\x44"  # results[1].error_code = 68 (NON_EMPTY_GROUP)
        b"\x05busy"  # results[1].error_message = "busy"
        b"\x00"  # results[1] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(42, 3, body, expected)


# --- OffsetDelete (47) ---------------------------------------------------------------------------------------


def test_offset_delete_v0_request_golden() -> None:
    body = OffsetDeleteRequest(
        group_id="g1",
        topics=[OffsetDeleteRequestTopic(name="t1", partitions=[OffsetDeleteRequestPartition(partition_index=2)])],
    )
    expected = (
        b"\x00\x2f"  # request_api_key = 47 (OffsetDelete)
        b"\x00\x00"  # request_api_version = 0 (never flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x02g1"  # group_id = "g1"
        b"\x00\x00\x00\x01"  # topics: int32 count 1
        b"\x00\x02t1"  # topics[0].name = "t1"
        b"\x00\x00\x00\x01"  # topics[0].partitions: int32 count 1
        b"\x00\x00\x00\x02"  # .partition_index = 2
    )
    check_request(header(47, 0), body, expected)


# --- ConsumerGroupHeartbeat (68) -----------------------------------------------------------------------------


def test_consumer_group_heartbeat_v0_request_golden() -> None:
    body = ConsumerGroupHeartbeatRequest(
        group_id="g1",
        member_id="m1",
        member_epoch=0,
        instance_id=None,
        rack_id=None,
        rebalance_timeout_ms=30000,
        subscribed_topic_names=["t1"],
        server_assignor=None,
        topic_partitions=[],
    )
    expected = (
        b"\x00\x44"  # request_api_key = 68 (ConsumerGroupHeartbeat)
        b"\x00\x00"  # request_api_version = 0 (flexible from v0)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03g1"  # group_id = "g1"
        b"\x03m1"  # member_id = "m1"
        b"\x00\x00\x00\x00"  # member_epoch = 0 (joining)
        b"\x00"  # instance_id = null
        b"\x00"  # rack_id = null
        b"\x00\x00\x75\x30"  # rebalance_timeout_ms = 30000
        b"\x02"  # subscribed_topic_names: compact array of 1
        b"\x03t1"  # [0] = "t1"
        # subscribed_topic_regex exists from v1
        b"\x00"  # server_assignor = null
        b"\x01"  # topic_partitions = [] (empty, not null: 0+1)
        b"\x00"  # body tagged fields: none
    )
    check_request(header(68, 0), body, expected)


def test_consumer_group_heartbeat_v1_request_null_subscription_golden() -> None:
    body = ConsumerGroupHeartbeatRequest(
        group_id="g1",
        member_id="m1",
        member_epoch=4,
        subscribed_topic_names=None,
        subscribed_topic_regex="t.*",
        topic_partitions=None,
    )
    expected = (
        b"\x00\x44"  # request_api_key = 68 (ConsumerGroupHeartbeat)
        b"\x00\x01"  # request_api_version = 1
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03g1"  # group_id = "g1"
        b"\x03m1"  # member_id = "m1"
        b"\x00\x00\x00\x04"  # member_epoch = 4
        b"\x00"  # instance_id = null
        b"\x00"  # rack_id = null
        b"\xff\xff\xff\xff"  # rebalance_timeout_ms = -1 (unchanged)
        b"\x00"  # subscribed_topic_names = null (unchanged)
        b"\x04t.*"  # subscribed_topic_regex = "t.*" (v1+)
        b"\x00"  # server_assignor = null
        b"\x00"  # topic_partitions = null (unchanged)
        b"\x00"  # body tagged fields: none
    )
    check_request(header(68, 1), body, expected)


def test_consumer_group_heartbeat_v0_response_with_assignment_golden() -> None:
    body = ConsumerGroupHeartbeatResponse(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        member_id="m1",
        member_epoch=1,
        heartbeat_interval_ms=5000,
        assignment=Assignment(topic_partitions=[TopicPartitions(topic_id=TOPIC_ID, partitions=[0, 1])]),
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0
        b"\x00"  # error_message = null
        b"\x03m1"  # member_id = "m1"
        b"\x00\x00\x00\x01"  # member_epoch = 1
        b"\x00\x00\x13\x88"  # heartbeat_interval_ms = 5000
        b"\x01"  # assignment: nullable struct marker, 1 = present (-1 = null)
        b"\x02"  # assignment.topic_partitions: compact array of 1
        + TOPIC_ID_BYTES  # .topic_id
        + b"\x03"  # .partitions: compact array of 2
        b"\x00\x00\x00\x00"  # [0] = 0
        b"\x00\x00\x00\x01"  # [1] = 1
        b"\x00"  # topic_partitions[0] tagged fields: none
        b"\x00"  # assignment tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(68, 0, body, expected)


def test_consumer_group_heartbeat_v0_response_null_assignment_golden() -> None:
    body = ConsumerGroupHeartbeatResponse(error_code=25, error_message="unknown member", member_id=None)
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x19"  # error_code = 25 (UNKNOWN_MEMBER_ID)
        b"\x0funknown member"  # error_message = "unknown member" (14+1)
        b"\x00"  # member_id = null
        b"\x00\x00\x00\x00"  # member_epoch = 0
        b"\x00\x00\x00\x00"  # heartbeat_interval_ms = 0
        b"\xff"  # assignment = null (int8 -1)
        b"\x00"  # body tagged fields: none
    )
    check_response(68, 0, body, expected)


# --- ConsumerGroupDescribe (69) ------------------------------------------------------------------------------


def test_consumer_group_describe_v0_request_golden() -> None:
    body = ConsumerGroupDescribeRequest(group_ids=["g1"], include_authorized_operations=False)
    expected = (
        b"\x00\x45"  # request_api_key = 69 (ConsumerGroupDescribe)
        b"\x00\x00"  # request_api_version = 0 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x02"  # group_ids: compact array of 1
        b"\x03g1"  # [0] = "g1"
        b"\x00"  # include_authorized_operations = false
        b"\x00"  # body tagged fields: none
    )
    check_request(header(69, 0), body, expected)


# --- Produce (0) ---------------------------------------------------------------------------------------------


def test_produce_v3_request_golden() -> None:
    body = ProduceRequest(
        transactional_id=None,
        acks=-1,
        timeout_ms=30000,
        topic_data=[TopicProduceData(name="t1", partition_data=[PartitionProduceData(index=0, records=b"abc")])],
    )
    expected = (
        b"\x00\x00"  # request_api_key = 0 (Produce)
        b"\x00\x03"  # request_api_version = 3
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\xff\xff"  # transactional_id = null
        b"\xff\xff"  # acks = -1 (all)
        b"\x00\x00\x75\x30"  # timeout_ms = 30000
        b"\x00\x00\x00\x01"  # topic_data: int32 count 1
        b"\x00\x02t1"  # topic_data[0].name = "t1"
        b"\x00\x00\x00\x01"  # topic_data[0].partition_data: int32 count 1
        b"\x00\x00\x00\x00"  # .index = 0
        b"\x00\x00\x00\x03abc"  # .records: int32 length 3, opaque bytes (a record batch on a real wire)
    )
    check_request(header(0, 3), body, expected)


def test_produce_v9_request_golden() -> None:
    body = ProduceRequest(
        transactional_id="tx",
        acks=1,
        timeout_ms=1000,
        topic_data=[TopicProduceData(name="t1", partition_data=[PartitionProduceData(index=1, records=None)])],
    )
    expected = (
        b"\x00\x00"  # request_api_key = 0 (Produce)
        b"\x00\x09"  # request_api_version = 9 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03tx"  # transactional_id = "tx"
        b"\x00\x01"  # acks = 1
        b"\x00\x00\x03\xe8"  # timeout_ms = 1000
        b"\x02"  # topic_data: compact array of 1
        b"\x03t1"  # topic_data[0].name = "t1"
        b"\x02"  # topic_data[0].partition_data: compact array of 1
        b"\x00\x00\x00\x01"  # .index = 1
        b"\x00"  # .records = null (compact nullable records)
        b"\x00"  # partition tagged fields: none
        b"\x00"  # topic tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_request(header(0, 9), body, expected)


def test_produce_v13_request_and_response_by_topic_id_golden() -> None:
    """v13 (KIP-516) names each topic by a 16-byte id in place of the name, in the request and the response."""
    topic_id = uuid.UUID(bytes=bytes(range(1, 17)))
    body = ProduceRequest(
        transactional_id=None,
        acks=-1,
        timeout_ms=1000,
        topic_data=[TopicProduceData(topic_id=topic_id, partition_data=[PartitionProduceData(index=1, records=None)])],
    )
    expected = (
        b"\x00\x00"  # request_api_key = 0 (Produce)
        b"\x00\x0d"  # request_api_version = 13 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x00"  # transactional_id = null
        b"\xff\xff"  # acks = -1
        b"\x00\x00\x03\xe8"  # timeout_ms = 1000
        b"\x02"  # topic_data: compact array of 1
        b"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10"  # topic_data[0].topic_id (v13+; no name)
        b"\x02"  # topic_data[0].partition_data: compact array of 1
        b"\x00\x00\x00\x01"  # .index = 1
        b"\x00"  # .records = null (compact nullable records)
        b"\x00"  # partition tagged fields: none
        b"\x00"  # topic tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_request(header(0, 13), body, expected)
    response = ProduceResponse(
        responses=[
            TopicProduceResponse(
                topic_id=topic_id,
                partition_responses=[
                    PartitionProduceResponse(
                        index=1,
                        error_code=100,
                        base_offset=-1,
                        log_append_time_ms=-1,
                        log_start_offset=-1,
                        record_errors=[],
                        error_message=None,
                    )
                ],
            )
        ],
        throttle_time_ms=0,
    )
    answer = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x02"  # responses: compact array of 1
        b"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10"  # responses[0].topic_id (v13+; no name)
        b"\x02"  # responses[0].partition_responses: compact array of 1
        b"\x00\x00\x00\x01"  # .index = 1
        b"\x00\x64"  # .error_code = 100 (UNKNOWN_b"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10")
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # .base_offset = -1
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # .log_append_time_ms = -1
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # .log_start_offset = -1
        b"\x01"  # .record_errors: compact array of 0
        b"\x00"  # .error_message = null
        b"\x00"  # partition tagged fields: none (current_leader at its default is not sent)
        b"\x00"  # topic tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00"  # body tagged fields: none
    )
    check_response(0, 13, response, answer)


def test_produce_v10_response_known_tagged_fields_golden() -> None:
    """KIP-951: CurrentLeader (tag 0 of a partition) and NodeEndpoints (tag 0 of the body) are tagged fields."""
    body = ProduceResponse(
        responses=[
            TopicProduceResponse(
                name="t1",
                partition_responses=[
                    PartitionProduceResponse(
                        index=0,
                        error_code=6,
                        base_offset=-1,
                        log_append_time_ms=-1,
                        log_start_offset=-1,
                        record_errors=[],
                        error_message=None,
                        current_leader=ProduceLeaderIdAndEpoch(leader_id=2, leader_epoch=5),
                    )
                ],
            )
        ],
        throttle_time_ms=0,
        node_endpoints=[ProduceNodeEndpoint(node_id=2, host="h2", port=9092, rack=None)],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x02"  # responses: compact array of 1
        b"\x03t1"  # responses[0].name = "t1"
        b"\x02"  # responses[0].partition_responses: compact array of 1
        b"\x00\x00\x00\x00"  # .index = 0
        b"\x00\x06"  # .error_code = 6 (NOT_LEADER_OR_FOLLOWER)
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # .base_offset = -1
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # .log_append_time_ms = -1
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # .log_start_offset = -1
        b"\x01"  # .record_errors = [] (compact)
        b"\x00"  # .error_message = null
        b"\x01"  # partition tagged fields: 1 field
        b"\x00"  # tag 0 = CurrentLeader
        b"\x09"  # size = 9
        b"\x00\x00\x00\x02"  # current_leader.leader_id = 2
        b"\x00\x00\x00\x05"  # current_leader.leader_epoch = 5
        b"\x00"  # current_leader tagged fields: none
        b"\x00"  # topic tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x01"  # body tagged fields: 1 field
        b"\x00"  # tag 0 = NodeEndpoints
        b"\x0e"  # size = 14
        b"\x02"  # node_endpoints: compact array of 1
        b"\x00\x00\x00\x02"  # [0].node_id = 2
        b"\x03h2"  # [0].host = "h2"
        b"\x00\x00\x23\x84"  # [0].port = 9092
        b"\x00"  # [0].rack = null
        b"\x00"  # [0] tagged fields: none
    )
    check_response(0, 10, body, expected)


# --- Fetch (1) -----------------------------------------------------------------------------------------------


def test_fetch_v4_request_golden() -> None:
    body = FetchRequest(
        replica_id=-1,
        max_wait_ms=500,
        min_bytes=1,
        max_bytes=1048576,
        isolation_level=1,
        topics=[
            FetchTopic(
                topic="t1",
                partitions=[FetchPartition(partition=0, fetch_offset=42, partition_max_bytes=1048576)],
            )
        ],
    )
    expected = (
        b"\x00\x01"  # request_api_key = 1 (Fetch)
        b"\x00\x04"  # request_api_version = 4
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\xff\xff\xff\xff"  # replica_id = -1 (a consumer)
        b"\x00\x00\x01\xf4"  # max_wait_ms = 500
        b"\x00\x00\x00\x01"  # min_bytes = 1
        b"\x00\x10\x00\x00"  # max_bytes = 1048576 (v3+)
        b"\x01"  # isolation_level = 1 (READ_COMMITTED, int8, v4+)
        b"\x00\x00\x00\x01"  # topics: int32 count 1
        b"\x00\x02t1"  # topics[0].topic = "t1"
        b"\x00\x00\x00\x01"  # topics[0].partitions: int32 count 1
        b"\x00\x00\x00\x00"  # .partition = 0
        b"\x00\x00\x00\x00\x00\x00\x00\x2a"  # .fetch_offset = 42
        b"\x00\x10\x00\x00"  # .partition_max_bytes = 1048576
    )
    check_request(header(1, 4), body, expected)


def test_fetch_v12_request_known_tagged_cluster_id_golden() -> None:
    body = FetchRequest(
        cluster_id="c",
        replica_id=-1,
        max_wait_ms=500,
        min_bytes=1,
        max_bytes=1048576,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=[
            FetchTopic(
                topic="t1",
                partitions=[
                    FetchPartition(
                        partition=0,
                        current_leader_epoch=3,
                        fetch_offset=42,
                        last_fetched_epoch=-1,
                        log_start_offset=-1,
                        partition_max_bytes=1048576,
                    )
                ],
            )
        ],
        forgotten_topics_data=[],
        rack_id="",
    )
    expected = (
        b"\x00\x01"  # request_api_key = 1 (Fetch)
        b"\x00\x0c"  # request_api_version = 12 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\xff\xff\xff\xff"  # replica_id = -1
        b"\x00\x00\x01\xf4"  # max_wait_ms = 500
        b"\x00\x00\x00\x01"  # min_bytes = 1
        b"\x00\x10\x00\x00"  # max_bytes = 1048576
        b"\x00"  # isolation_level = 0
        b"\x00\x00\x00\x00"  # session_id = 0
        b"\xff\xff\xff\xff"  # session_epoch = -1
        b"\x02"  # topics: compact array of 1
        b"\x03t1"  # topics[0].topic = "t1" (topic ids from v13)
        b"\x02"  # topics[0].partitions: compact array of 1
        b"\x00\x00\x00\x00"  # .partition = 0
        b"\x00\x00\x00\x03"  # .current_leader_epoch = 3
        b"\x00\x00\x00\x00\x00\x00\x00\x2a"  # .fetch_offset = 42
        b"\xff\xff\xff\xff"  # .last_fetched_epoch = -1 (v12+)
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # .log_start_offset = -1
        b"\x00\x10\x00\x00"  # .partition_max_bytes = 1048576
        b"\x00"  # partition tagged fields: none
        b"\x00"  # topic tagged fields: none
        b"\x01"  # forgotten_topics_data = [] (compact)
        b"\x01"  # rack_id = "" (compact)
        b"\x01"  # body tagged fields: 1 field
        b"\x00"  # tag 0 = ClusterId
        b"\x02"  # size = 2
        b"\x02c"  # cluster_id = "c" (compact nullable string inside the tag)
    )
    check_request(header(1, 12), body, expected)


def test_fetch_v12_response_known_tag_and_unknown_tag_golden() -> None:
    """PartitionData.CurrentLeader is tag 1; tag 5 is unknown, kept in unknown_tagged_fields and re-encoded."""
    partition = PartitionData(
        partition_index=0,
        error_code=6,
        high_watermark=-1,
        last_stable_offset=-1,
        log_start_offset=-1,
        current_leader=LeaderIdAndEpoch(leader_id=2, leader_epoch=9),
        aborted_transactions=None,
        preferred_read_replica=-1,
        records=b"",
        unknown_tagged_fields={5: b"\xab"},
    )
    body = FetchResponse(
        throttle_time_ms=0,
        error_code=0,
        session_id=0,
        responses=[FetchableTopicResponse(topic="t1", partitions=[partition])],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0
        b"\x00\x00\x00\x00"  # session_id = 0
        b"\x02"  # responses: compact array of 1
        b"\x03t1"  # responses[0].topic = "t1"
        b"\x02"  # responses[0].partitions: compact array of 1
        b"\x00\x00\x00\x00"  # .partition_index = 0
        b"\x00\x06"  # .error_code = 6 (NOT_LEADER_OR_FOLLOWER)
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # .high_watermark = -1
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # .last_stable_offset = -1
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # .log_start_offset = -1
        b"\x00"  # .aborted_transactions = null (compact)
        b"\xff\xff\xff\xff"  # .preferred_read_replica = -1
        b"\x01"  # .records = empty (compact: 0+1)
        b"\x02"  # partition tagged fields: 2 fields, ascending tags
        b"\x01"  # tag 1 = CurrentLeader
        b"\x09"  # size = 9
        b"\x00\x00\x00\x02"  # current_leader.leader_id = 2
        b"\x00\x00\x00\x09"  # current_leader.leader_epoch = 9
        b"\x00"  # current_leader tagged fields: none
        b"\x05"  # tag 5: unknown to FetchResponse v12
        b"\x01"  # size = 1
        b"\xab"  # raw bytes
        b"\x00"  # topic tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(1, 12, body, expected)


# --- ListOffsets (2) -----------------------------------------------------------------------------------------


def test_list_offsets_v1_request_golden() -> None:
    body = ListOffsetsRequest(
        replica_id=-1,
        topics=[ListOffsetsTopic(name="t1", partitions=[ListOffsetsPartition(partition_index=3, timestamp=-2)])],
    )
    expected = (
        b"\x00\x02"  # request_api_key = 2 (ListOffsets)
        b"\x00\x01"  # request_api_version = 1
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\xff\xff\xff\xff"  # replica_id = -1 (isolation_level from v2)
        b"\x00\x00\x00\x01"  # topics: int32 count 1
        b"\x00\x02t1"  # topics[0].name = "t1"
        b"\x00\x00\x00\x01"  # topics[0].partitions: int32 count 1
        b"\x00\x00\x00\x03"  # .partition_index = 3
        b"\xff\xff\xff\xff\xff\xff\xff\xfe"  # .timestamp = -2 (EARLIEST); max_num_offsets is v0 only
    )
    check_request(header(2, 1), body, expected)


def test_list_offsets_v0_response_old_style_offsets_golden() -> None:
    body = ListOffsetsResponse(
        topics=[
            ListOffsetsTopicResponse(
                name="t1",
                partitions=[ListOffsetsPartitionResponse(partition_index=3, error_code=0, old_style_offsets=[7])],
            )
        ]
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x00\x00\x01"  # topics: int32 count 1 (throttle_time_ms from v2)
        b"\x00\x02t1"  # topics[0].name = "t1"
        b"\x00\x00\x00\x01"  # topics[0].partitions: int32 count 1
        b"\x00\x00\x00\x03"  # .partition_index = 3
        b"\x00\x00"  # .error_code = 0
        b"\x00\x00\x00\x01"  # .old_style_offsets: int32 count 1 (v0 only)
        b"\x00\x00\x00\x00\x00\x00\x00\x07"  # [0] = 7
    )
    check_response(2, 0, body, expected)


# --- SaslHandshake (17) --------------------------------------------------------------------------------------


def test_sasl_handshake_v1_request_golden() -> None:
    expected = (
        b"\x00\x11"  # request_api_key = 17 (SaslHandshake)
        b"\x00\x01"  # request_api_version = 1 (never flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x05PLAIN"  # mechanism = "PLAIN"
    )
    check_request(header(17, 1), SaslHandshakeRequest(mechanism="PLAIN"), expected)


def test_sasl_handshake_v1_response_golden() -> None:
    body = SaslHandshakeResponse(error_code=33, mechanisms=["PLAIN", "SCRAM-SHA-256"])
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x21"  # error_code = 33 (UNSUPPORTED_SASL_MECHANISM)
        b"\x00\x00\x00\x02"  # mechanisms: int32 count 2
        b"\x00\x05PLAIN"  # [0] = "PLAIN"
        b"\x00\x0dSCRAM-SHA-256"  # [1] = "SCRAM-SHA-256"
    )
    check_response(17, 1, body, expected)


# --- SaslAuthenticate (36) -----------------------------------------------------------------------------------


def test_sasl_authenticate_v0_request_golden() -> None:
    expected = (
        b"\x00\x24"  # request_api_key = 36 (SaslAuthenticate)
        b"\x00\x00"  # request_api_version = 0
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x00\x00\x05\x00u\x00pw"  # auth_bytes = "\0u\0pw" (int32 length 5)
    )
    check_request(header(36, 0), SaslAuthenticateRequest(auth_bytes=b"\x00u\x00pw"), expected)


def test_sasl_authenticate_v2_request_golden() -> None:
    expected = (
        b"\x00\x24"  # request_api_key = 36 (SaslAuthenticate)
        b"\x00\x02"  # request_api_version = 2 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x06\x00u\x00pw"  # auth_bytes = "\0u\0pw" (compact bytes: 5+1)
        b"\x00"  # body tagged fields: none
    )
    check_request(header(36, 2), SaslAuthenticateRequest(auth_bytes=b"\x00u\x00pw"), expected)


def test_sasl_authenticate_v1_response_golden() -> None:
    body = SaslAuthenticateResponse(error_code=0, error_message=None, auth_bytes=b"", session_lifetime_ms=3600000)
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x00"  # error_code = 0
        b"\xff\xff"  # error_message = null
        b"\x00\x00\x00\x00"  # auth_bytes = empty (int32 length 0)
        b"\x00\x00\x00\x00\x00\x36\xee\x80"  # session_lifetime_ms = 3600000 (v1+)
    )
    check_response(36, 1, body, expected)


# --- DescribeUserScramCredentials (50), AlterUserScramCredentials (51): flexible from v0 ---------------------


SCRAM_HEADER_V2 = b"\x00\x00\x00\x07" + b"\x00\x03cli" + b"\x00"  # correlation_id 7, client_id "cli", no tagged fields


def test_describe_user_scram_credentials_v0_request_golden() -> None:
    expected = (
        b"\x00\x32"  # request_api_key = 50 (DescribeUserScramCredentials)
        b"\x00\x00" + SCRAM_HEADER_V2 + b"\x02"  # request_api_version = 0 (flexible)  # users: compact array, 1 entry
        b"\x06alice"  # name = "alice" (compact string: 5+1)
        b"\x00"  # user tagged fields
        b"\x00"  # body tagged fields
    )
    check_request(header(50, 0), DescribeUserScramCredentialsRequest(users=[UserName(name="alice")]), expected)


def test_describe_user_scram_credentials_v0_request_for_every_user_golden() -> None:
    expected = b"\x00\x32\x00\x00" + SCRAM_HEADER_V2 + b"\x00" + b"\x00"  # users = null (compact length 0), tagged
    check_request(header(50, 0), DescribeUserScramCredentialsRequest(users=None), expected)


def test_describe_user_scram_credentials_v0_response_golden() -> None:
    body = DescribeUserScramCredentialsResponse(
        throttle_time_ms=0,
        error_code=0,
        error_message="",
        results=[
            DescribeUserScramCredentialsResult(
                user="alice", error_code=0, error_message="",
                credential_infos=[CredentialInfo(mechanism=2, iterations=8192)],
            ),
            DescribeUserScramCredentialsResult(user="bob", error_code=91, error_message="gone", credential_infos=[]),
        ],
    )  # fmt: skip
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header tagged fields
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0
        b"\x01"  # error_message = "" (compact nullable string: 0+1)
        b"\x03"  # results: 2 entries
        b"\x06alice"  # user = "alice"
        b"\x00\x00"  # error_code = 0
        b"\x01"  # error_message = ""
        b"\x02"  # credential_infos: 1 entry
        b"\x02"  # mechanism = 2 (SCRAM-SHA-512)
        b"\x00\x00\x20\x00"  # iterations = 8192
        b"\x00"  # credential info tagged fields
        b"\x00"  # result tagged fields
        b"\x04bob"  # user = "bob"
        b"\x00\x5b"  # error_code = 91 (RESOURCE_NOT_FOUND)
        b"\x05gone"  # error_message = "gone"
        b"\x01"  # credential_infos: empty
        b"\x00"  # result tagged fields
        b"\x00"  # body tagged fields
    )
    check_response(50, 0, body, expected)


def test_alter_user_scram_credentials_v0_request_golden() -> None:
    body = AlterUserScramCredentialsRequest(
        deletions=[ScramCredentialDeletion(name="bob", mechanism=1)],
        upsertions=[
            ScramCredentialUpsertion(name="alice", mechanism=2, iterations=4096, salt=b"s1", salted_password=b"pw")
        ],
    )
    expected = (
        b"\x00\x33"  # request_api_key = 51 (AlterUserScramCredentials)
        b"\x00\x00" + SCRAM_HEADER_V2 + b"\x02"  # request_api_version = 0 (flexible)  # deletions: 1 entry
        b"\x04bob"  # name = "bob"
        b"\x01"  # mechanism = 1 (SCRAM-SHA-256)
        b"\x00"  # deletion tagged fields
        b"\x02"  # upsertions: 1 entry
        b"\x06alice"  # name = "alice"
        b"\x02"  # mechanism = 2 (SCRAM-SHA-512)
        b"\x00\x00\x10\x00"  # iterations = 4096
        b"\x03s1"  # salt (compact bytes: 2+1)
        b"\x03pw"  # salted_password (compact bytes: 2+1)
        b"\x00"  # upsertion tagged fields
        b"\x00"  # body tagged fields
    )
    check_request(header(51, 0), body, expected)


def test_alter_user_scram_credentials_v0_response_golden() -> None:
    body = AlterUserScramCredentialsResponse(
        throttle_time_ms=0,
        results=[
            AlterUserScramCredentialsResult(user="alice", error_code=0, error_message=None),
            AlterUserScramCredentialsResult(user="x", error_code=93, error_message="Too few iterations"),
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header tagged fields
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x03"  # results: 2 entries
        b"\x06alice"  # user = "alice"
        b"\x00\x00"  # error_code = 0
        b"\x00"  # error_message = null (compact nullable string: 0)
        b"\x00"  # result tagged fields
        b"\x02x"  # user = "x"
        b"\x00\x5d"  # error_code = 93 (UNACCEPTABLE_CREDENTIAL)
        b"\x13Too few iterations"  # error_message (18+1)
        b"\x00"  # result tagged fields
        b"\x00"  # body tagged fields
    )
    check_response(51, 0, body, expected)


# --- CreateTopics (19) ---------------------------------------------------------------------------------------


def test_create_topics_v2_request_golden() -> None:
    body = CreateTopicsRequest(
        topics=[
            CreatableTopic(
                name="t1",
                num_partitions=3,
                replication_factor=1,
                assignments=[],
                configs=[CreatableTopicConfig(name="retention.ms", value=None)],
            )
        ],
        timeout_ms=30000,
        validate_only=True,
    )
    expected = (
        b"\x00\x13"  # request_api_key = 19 (CreateTopics)
        b"\x00\x02"  # request_api_version = 2
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x00\x00\x01"  # topics: int32 count 1
        b"\x00\x02t1"  # topics[0].name = "t1"
        b"\x00\x00\x00\x03"  # .num_partitions = 3
        b"\x00\x01"  # .replication_factor = 1
        b"\x00\x00\x00\x00"  # .assignments = [] (int32 count 0)
        b"\x00\x00\x00\x01"  # .configs: int32 count 1
        b"\x00\x0cretention.ms"  # .configs[0].name = "retention.ms"
        b"\xff\xff"  # .configs[0].value = null
        b"\x00\x00\x75\x30"  # timeout_ms = 30000
        b"\x01"  # validate_only = true (v1+)
    )
    check_request(header(19, 2), body, expected)


def test_create_topics_v5_request_golden() -> None:
    body = CreateTopicsRequest(
        topics=[
            CreatableTopic(
                name="t1",
                num_partitions=-1,
                replication_factor=-1,
                assignments=[],
                configs=[CreatableTopicConfig(name="cleanup.policy", value="compact")],
            )
        ],
        timeout_ms=30000,
        validate_only=False,
    )
    expected = (
        b"\x00\x13"  # request_api_key = 19 (CreateTopics)
        b"\x00\x05"  # request_api_version = 5 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x02"  # topics: compact array of 1
        b"\x03t1"  # topics[0].name = "t1"
        b"\xff\xff\xff\xff"  # .num_partitions = -1 (broker default)
        b"\xff\xff"  # .replication_factor = -1 (broker default)
        b"\x01"  # .assignments = [] (compact)
        b"\x02"  # .configs: compact array of 1
        b"\x0fcleanup.policy"  # .configs[0].name = "cleanup.policy" (14+1)
        b"\x08compact"  # .configs[0].value = "compact" (7+1)
        b"\x00"  # config tagged fields: none
        b"\x00"  # topic tagged fields: none
        b"\x00\x00\x75\x30"  # timeout_ms = 30000
        b"\x00"  # validate_only = false
        b"\x00"  # body tagged fields: none
    )
    check_request(header(19, 5), body, expected)


def test_create_topics_v5_response_known_tagged_topic_config_error_code_golden() -> None:
    body = CreateTopicsResponse(
        throttle_time_ms=0,
        topics=[
            CreatableTopicResult(
                name="t1",
                error_code=0,
                error_message=None,
                topic_config_error_code=29,
                num_partitions=3,
                replication_factor=1,
                configs=None,
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x02"  # topics: compact array of 1
        b"\x03t1"  # topics[0].name = "t1" (topic_id from v7)
        b"\x00\x00"  # .error_code = 0
        b"\x00"  # .error_message = null
        b"\x00\x00\x00\x03"  # .num_partitions = 3
        b"\x00\x01"  # .replication_factor = 1
        b"\x00"  # .configs = null (compact)
        b"\x01"  # topic tagged fields: 1 field
        b"\x00"  # tag 0 = TopicConfigErrorCode
        b"\x02"  # size = 2
        b"\x00\x1d"  # topic_config_error_code = 29 (TOPIC_AUTHORIZATION_FAILED)
        b"\x00"  # body tagged fields: none
    )
    check_response(19, 5, body, expected)


# --- DeleteTopics (20) ---------------------------------------------------------------------------------------


def test_delete_topics_v3_request_golden() -> None:
    expected = (
        b"\x00\x14"  # request_api_key = 20 (DeleteTopics)
        b"\x00\x03"  # request_api_version = 3
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x00\x00\x01"  # topic_names: int32 count 1 (v0-5)
        b"\x00\x02t1"  # [0] = "t1"
        b"\x00\x00\x75\x30"  # timeout_ms = 30000
    )
    check_request(header(20, 3), DeleteTopicsRequest(topic_names=["t1"], timeout_ms=30000), expected)


def test_delete_topics_v6_request_golden() -> None:
    body = DeleteTopicsRequest(
        topics=[DeleteTopicState(name="t1"), DeleteTopicState(name=None, topic_id=TOPIC_ID)], timeout_ms=30000
    )
    expected = (
        b"\x00\x14"  # request_api_key = 20 (DeleteTopics)
        b"\x00\x06"  # request_api_version = 6 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03"  # topics: compact array of 2 (topic_names ends at v5)
        b"\x03t1"  # topics[0].name = "t1"
        b"\x00\x00\x00\x00\x00\x00\x00\x00"  # topics[0].topic_id = zero uuid (bytes 0-7)
        b"\x00\x00\x00\x00\x00\x00\x00\x00"  # (bytes 8-15)
        b"\x00"  # topics[0] tagged fields: none
        b"\x00"  # topics[1].name = null
        + TOPIC_ID_BYTES  # topics[1].topic_id
        + b"\x00"  # topics[1] tagged fields: none
        b"\x00\x00\x75\x30"  # timeout_ms = 30000
        b"\x00"  # body tagged fields: none
    )
    check_request(header(20, 6), body, expected)


# --- InitProducerId (22) -------------------------------------------------------------------------------------


def test_init_producer_id_v4_request_golden() -> None:
    body = InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1)
    expected = (
        b"\x00\x16"  # request_api_key = 22 (InitProducerId)
        b"\x00\x04"  # request_api_version = 4 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x00"  # transactional_id = null (idempotent producer)
        b"\x00\x00\xea\x60"  # transaction_timeout_ms = 60000
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # producer_id = -1 (v3+)
        b"\xff\xff"  # producer_epoch = -1 (v3+)
        b"\x00"  # body tagged fields: none
    )
    check_request(header(22, 4), body, expected)


def test_init_producer_id_v0_response_golden() -> None:
    body = InitProducerIdResponse(throttle_time_ms=0, error_code=0, producer_id=1000, producer_epoch=0)
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0
        b"\x00\x00\x00\x00\x00\x00\x03\xe8"  # producer_id = 1000
        b"\x00\x00"  # producer_epoch = 0
    )
    check_response(22, 0, body, expected)


# --- DescribeConfigs (32) ------------------------------------------------------------------------------------


def test_describe_configs_v1_request_golden() -> None:
    body = DescribeConfigsRequest(
        resources=[DescribeConfigsResource(resource_type=2, resource_name="t1", configuration_keys=["retention.ms"])],
        include_synonyms=True,
    )
    expected = (
        b"\x00\x20"  # request_api_key = 32 (DescribeConfigs)
        b"\x00\x01"  # request_api_version = 1
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x00\x00\x01"  # resources: int32 count 1
        b"\x02"  # resources[0].resource_type = 2 (TOPIC, int8)
        b"\x00\x02t1"  # resources[0].resource_name = "t1"
        b"\x00\x00\x00\x01"  # resources[0].configuration_keys: int32 count 1
        b"\x00\x0cretention.ms"  # [0] = "retention.ms"
        b"\x01"  # include_synonyms = true (v1+)
    )
    check_request(header(32, 1), body, expected)


def test_describe_configs_v4_request_golden() -> None:
    body = DescribeConfigsRequest(
        resources=[DescribeConfigsResource(resource_type=4, resource_name="1", configuration_keys=None)],
        include_synonyms=False,
        include_documentation=True,
    )
    expected = (
        b"\x00\x20"  # request_api_key = 32 (DescribeConfigs)
        b"\x00\x04"  # request_api_version = 4 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x02"  # resources: compact array of 1
        b"\x04"  # resources[0].resource_type = 4 (BROKER)
        b"\x021"  # resources[0].resource_name = "1"
        b"\x00"  # resources[0].configuration_keys = null (all keys)
        b"\x00"  # resources[0] tagged fields: none
        b"\x00"  # include_synonyms = false
        b"\x01"  # include_documentation = true (v3+)
        b"\x00"  # body tagged fields: none
    )
    check_request(header(32, 4), body, expected)


# --- AlterConfigs (33) -----------------------------------------------------------------------------------------


def test_alter_configs_v0_request_golden() -> None:
    body = alter.AlterConfigsRequest(
        resources=[
            alter.AlterConfigsResource(
                resource_type=2,
                resource_name="t1",
                configs=[
                    alter.AlterableConfig(name="retention.ms", value="5"),
                    alter.AlterableConfig(name="x", value=None),
                ],
            )
        ],
        validate_only=True,
    )
    expected = (
        b"\x00\x21"  # request_api_key = 33 (AlterConfigs)
        b"\x00\x00"  # request_api_version = 0
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x00\x00\x01"  # resources: int32 count 1
        b"\x02"  # resources[0].resource_type = 2 (TOPIC, int8)
        b"\x00\x02t1"  # resources[0].resource_name = "t1"
        b"\x00\x00\x00\x02"  # resources[0].configs: int32 count 2
        b"\x00\x0cretention.ms"  # configs[0].name
        b"\x00\x015"  # configs[0].value = "5"
        b"\x00\x01x"  # configs[1].name
        b"\xff\xff"  # configs[1].value = null (int16 -1)
        b"\x01"  # validate_only = true
    )
    check_request(header(33, 0), body, expected)


def test_alter_configs_v2_response_golden() -> None:
    body = alter.AlterConfigsResponse(
        throttle_time_ms=0,
        responses=[
            alter.AlterConfigsResourceResponse(error_code=0, error_message=None, resource_type=4, resource_name="1"),
            alter.AlterConfigsResourceResponse(error_code=40, error_message="bad", resource_type=2, resource_name="t"),
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x03"  # responses: compact array of 2
        b"\x00\x00"  # responses[0].error_code = 0
        b"\x00"  # responses[0].error_message = null (compact)
        b"\x04"  # responses[0].resource_type = 4 (BROKER)
        b"\x021"  # responses[0].resource_name = "1"
        b"\x00"  # responses[0] tagged fields: none
        b"\x00\x28"  # responses[1].error_code = 40 (INVALID_CONFIG)
        b"\x04bad"  # responses[1].error_message = "bad"
        b"\x02"  # responses[1].resource_type = 2 (TOPIC)
        b"\x02t"  # responses[1].resource_name = "t"
        b"\x00"  # responses[1] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(33, 2, body, expected)


# --- IncrementalAlterConfigs (44) ------------------------------------------------------------------------------


def test_incremental_alter_configs_v0_response_golden() -> None:
    body = incremental.IncrementalAlterConfigsResponse(
        throttle_time_ms=5,
        responses=[
            incremental.AlterConfigsResourceResponse(
                error_code=3, error_message="gone", resource_type=2, resource_name="t1"
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x00\x00\x05"  # throttle_time_ms = 5
        b"\x00\x00\x00\x01"  # responses: int32 count 1
        b"\x00\x03"  # responses[0].error_code = 3 (UNKNOWN_TOPIC_OR_PARTITION)
        b"\x00\x04gone"  # responses[0].error_message = "gone"
        b"\x02"  # responses[0].resource_type = 2 (TOPIC)
        b"\x00\x02t1"  # responses[0].resource_name = "t1"
    )
    check_response(44, 0, body, expected)


def test_incremental_alter_configs_v1_request_golden() -> None:
    body = incremental.IncrementalAlterConfigsRequest(
        resources=[
            incremental.AlterConfigsResource(
                resource_type=2,
                resource_name="t1",
                configs=[
                    incremental.AlterableConfig(name="cleanup.policy", config_operation=2, value="compact"),
                    incremental.AlterableConfig(name="retention.ms", config_operation=1, value=None),
                ],
            )
        ],
        validate_only=False,
    )
    expected = (
        b"\x00\x2c"  # request_api_key = 44 (IncrementalAlterConfigs)
        b"\x00\x01"  # request_api_version = 1 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x02"  # resources: compact array of 1
        b"\x02"  # resources[0].resource_type = 2 (TOPIC)
        b"\x03t1"  # resources[0].resource_name = "t1"
        b"\x03"  # resources[0].configs: compact array of 2
        b"\x0fcleanup.policy"  # configs[0].name
        b"\x02"  # configs[0].config_operation = 2 (APPEND)
        b"\x08compact"  # configs[0].value = "compact"
        b"\x00"  # configs[0] tagged fields: none
        b"\x0dretention.ms"  # configs[1].name
        b"\x01"  # configs[1].config_operation = 1 (DELETE)
        b"\x00"  # configs[1].value = null (compact)
        b"\x00"  # configs[1] tagged fields: none
        b"\x00"  # resources[0] tagged fields: none
        b"\x00"  # validate_only = false
        b"\x00"  # body tagged fields: none
    )
    check_request(header(44, 1), body, expected)


# --- ListConfigResources (74) ----------------------------------------------------------------------------------


def test_list_config_resources_v1_request_golden() -> None:
    body = ListConfigResourcesRequest(resource_types=[2, 4])
    expected = (
        b"\x00\x4a"  # request_api_key = 74 (ListConfigResources)
        b"\x00\x01"  # request_api_version = 1 (flexible from v0)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03"  # resource_types: compact array of 2
        b"\x02"  # [0] = 2 (TOPIC, int8)
        b"\x04"  # [1] = 4 (BROKER)
        b"\x00"  # body tagged fields: none
    )
    check_request(header(74, 1), body, expected)


def test_list_config_resources_v0_and_v1_responses_golden() -> None:
    v0 = ListConfigResourcesResponse(throttle_time_ms=0, error_code=0, config_resources=[])
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0
        b"\x01"  # config_resources: compact array of 0
        b"\x00"  # body tagged fields: none
    )
    check_response(74, 0, v0, expected)
    v1 = ListConfigResourcesResponse(
        throttle_time_ms=0, error_code=0, config_resources=[ConfigResource(resource_name="1", resource_type=8)]
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0
        b"\x02"  # config_resources: compact array of 1
        b"\x021"  # config_resources[0].resource_name = "1"
        b"\x08"  # config_resources[0].resource_type = 8 (BROKER_LOGGER, v1+)
        b"\x00"  # config_resources[0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(74, 1, v1, expected)


# --- CreatePartitions (37) -----------------------------------------------------------------------------------


def test_create_partitions_v2_request_golden() -> None:
    body = CreatePartitionsRequest(
        topics=[CreatePartitionsTopic(name="t1", count=4, assignments=None)], timeout_ms=30000, validate_only=False
    )
    expected = (
        b"\x00\x25"  # request_api_key = 37 (CreatePartitions)
        b"\x00\x02"  # request_api_version = 2 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x02"  # topics: compact array of 1
        b"\x03t1"  # topics[0].name = "t1"
        b"\x00\x00\x00\x04"  # topics[0].count = 4
        b"\x00"  # topics[0].assignments = null (broker chooses)
        b"\x00"  # topics[0] tagged fields: none
        b"\x00\x00\x75\x30"  # timeout_ms = 30000
        b"\x00"  # validate_only = false
        b"\x00"  # body tagged fields: none
    )
    check_request(header(37, 2), body, expected)


# --- AddPartitionsToTxn (24) ---------------------------------------------------------------------------------


def test_add_partitions_to_txn_v2_request_golden() -> None:
    """v0-3 carry one transaction in top-level fields, which Kafka's schema names V3AndBelow*."""
    body = AddPartitionsToTxnRequest(
        v3_and_below_transactional_id="tx",
        v3_and_below_producer_id=4096,
        v3_and_below_producer_epoch=3,
        v3_and_below_topics=[AddPartitionsToTxnTopic(name="t1", partitions=[0, 1])],
    )
    expected = (
        b"\x00\x18"  # request_api_key = 24 (AddPartitionsToTxn)
        b"\x00\x02"  # request_api_version = 2 (not flexible -> request header v1)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x02tx"  # v3_and_below_transactional_id = "tx"
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # v3_and_below_producer_id = 4096
        b"\x00\x03"  # v3_and_below_producer_epoch = 3
        b"\x00\x00\x00\x01"  # v3_and_below_topics: int32 count 1
        b"\x00\x02t1"  # [0].name = "t1"
        b"\x00\x00\x00\x02"  # [0].partitions: int32 count 2
        b"\x00\x00\x00\x00"  # [0].partitions[0] = 0
        b"\x00\x00\x00\x01"  # [0].partitions[1] = 1
    )
    check_request(header(24, 2), body, expected)


def test_add_partitions_to_txn_v3_request_golden() -> None:
    """v3: the first flexible version and the last one with the single-transaction form."""
    body = AddPartitionsToTxnRequest(
        v3_and_below_transactional_id="tx",
        v3_and_below_producer_id=4096,
        v3_and_below_producer_epoch=3,
        v3_and_below_topics=[AddPartitionsToTxnTopic(name="t1", partitions=[0, 1])],
    )
    expected = (
        b"\x00\x18"  # request_api_key = 24 (AddPartitionsToTxn)
        b"\x00\x03"  # request_api_version = 3 (flexible -> request header v2)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03tx"  # v3_and_below_transactional_id = "tx" (compact: 2+1)
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # v3_and_below_producer_id = 4096
        b"\x00\x03"  # v3_and_below_producer_epoch = 3
        b"\x02"  # v3_and_below_topics: compact array of 1
        b"\x03t1"  # [0].name = "t1"
        b"\x03"  # [0].partitions: compact array of 2
        b"\x00\x00\x00\x00"  # [0].partitions[0] = 0
        b"\x00\x00\x00\x01"  # [0].partitions[1] = 1
        b"\x00"  # [0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_request(header(24, 3), body, expected)


def test_add_partitions_to_txn_v4_request_batched_verify_only_golden() -> None:
    """v4+ is the inter-broker batch (KIP-890): a Transactions array, each entry with its own VerifyOnly flag."""
    body = AddPartitionsToTxnRequest(
        transactions=[
            AddPartitionsToTxnTransaction(
                transactional_id="tx",
                producer_id=4096,
                producer_epoch=3,
                verify_only=True,
                topics=[AddPartitionsToTxnTopic(name="t1", partitions=[0])],
            ),
            AddPartitionsToTxnTransaction(
                transactional_id="ty",
                producer_id=4097,
                producer_epoch=0,
                verify_only=False,
                topics=[AddPartitionsToTxnTopic(name="t2", partitions=[5])],
            ),
        ]
    )
    expected = (
        b"\x00\x18"  # request_api_key = 24 (AddPartitionsToTxn)
        b"\x00\x04"  # request_api_version = 4 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03"  # transactions: compact array of 2
        b"\x03tx"  # [0].transactional_id = "tx"
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # [0].producer_id = 4096
        b"\x00\x03"  # [0].producer_epoch = 3
        b"\x01"  # [0].verify_only = true (check the partitions are in the transaction, add nothing)
        b"\x02"  # [0].topics: compact array of 1
        b"\x03t1"  # [0].topics[0].name = "t1"
        b"\x02\x00\x00\x00\x00"  # [0].topics[0].partitions = [0] (compact int32 array)
        b"\x00"  # [0].topics[0] tagged fields: none
        b"\x00"  # [0] tagged fields: none
        b"\x03ty"  # [1].transactional_id = "ty"
        b"\x00\x00\x00\x00\x00\x00\x10\x01"  # [1].producer_id = 4097
        b"\x00\x00"  # [1].producer_epoch = 0
        b"\x00"  # [1].verify_only = false
        b"\x02"  # [1].topics: compact array of 1
        b"\x03t2"  # [1].topics[0].name = "t2"
        b"\x02\x00\x00\x00\x05"  # [1].topics[0].partitions = [5]
        b"\x00"  # [1].topics[0] tagged fields: none
        b"\x00"  # [1] tagged fields: none
        # the V3AndBelow* fields do not exist from v4
        b"\x00"  # body tagged fields: none
    )
    check_request(header(24, 4), body, expected)


def test_add_partitions_to_txn_forms_do_not_mix() -> None:
    """Neither form is silently dropped at the other's versions (neither is `ignorable` in Kafka's schema)."""
    batched = AddPartitionsToTxnRequest(transactions=[AddPartitionsToTxnTransaction(transactional_id="tx")])
    with pytest.raises(EncodeError, match=r"transactions .*does not exist in version 3"):
        encode_request(header(24, 3), batched)
    single = AddPartitionsToTxnRequest(v3_and_below_transactional_id="tx")
    with pytest.raises(EncodeError, match=r"v3_and_below_transactional_id .*does not exist in version 4"):
        encode_request(header(24, 4), single)
    per_topic = AddPartitionsToTxnResponse(results_by_topic_v3_and_below=[AddPartitionsToTxnTopicResult(name="t1")])
    with pytest.raises(EncodeError, match=r"results_by_topic_v3_and_below .*does not exist in version 4"):
        encode_response(24, 4, 7, per_topic)


def test_add_partitions_to_txn_v2_response_golden() -> None:
    body = AddPartitionsToTxnResponse(
        throttle_time_ms=0,
        results_by_topic_v3_and_below=[
            AddPartitionsToTxnTopicResult(
                name="t1",
                results_by_partition=[
                    AddPartitionsToTxnPartitionResult(partition_index=0, partition_error_code=55),
                    AddPartitionsToTxnPartitionResult(partition_index=1, partition_error_code=3),
                ],
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7 (response header v0)
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0 (no top-level error_code before v4)
        b"\x00\x00\x00\x01"  # results_by_topic_v3_and_below: int32 count 1
        b"\x00\x02t1"  # [0].name = "t1"
        b"\x00\x00\x00\x02"  # [0].results_by_partition: int32 count 2
        b"\x00\x00\x00\x00"  # [0].results_by_partition[0].partition_index = 0
        b"\x00\x37"  # [0].results_by_partition[0].partition_error_code = 55 (OPERATION_NOT_ATTEMPTED)
        b"\x00\x00\x00\x01"  # [0].results_by_partition[1].partition_index = 1
        b"\x00\x03"  # [0].results_by_partition[1].partition_error_code = 3 (UNKNOWN_TOPIC_OR_PARTITION)
    )
    check_response(24, 2, body, expected)


def test_add_partitions_to_txn_v3_response_golden() -> None:
    body = AddPartitionsToTxnResponse(
        throttle_time_ms=0,
        results_by_topic_v3_and_below=[
            AddPartitionsToTxnTopicResult(
                name="t1",
                results_by_partition=[AddPartitionsToTxnPartitionResult(partition_index=0, partition_error_code=0)],
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x02"  # results_by_topic_v3_and_below: compact array of 1
        b"\x03t1"  # [0].name = "t1"
        b"\x02"  # [0].results_by_partition: compact array of 1
        b"\x00\x00\x00\x00"  # .partition_index = 0
        b"\x00\x00"  # .partition_error_code = 0
        b"\x00"  # partition result tagged fields: none
        b"\x00"  # [0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(24, 3, body, expected)


def test_add_partitions_to_txn_v4_response_golden() -> None:
    body = AddPartitionsToTxnResponse(
        throttle_time_ms=0,
        error_code=0,
        results_by_transaction=[
            AddPartitionsToTxnResult(
                transactional_id="tx",
                topic_results=[
                    AddPartitionsToTxnTopicResult(
                        name="t1",
                        results_by_partition=[
                            AddPartitionsToTxnPartitionResult(partition_index=0, partition_error_code=48)
                        ],
                    )
                ],
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0 (top level, v4+)
        b"\x02"  # results_by_transaction: compact array of 1
        b"\x03tx"  # [0].transactional_id = "tx"
        b"\x02"  # [0].topic_results: compact array of 1
        b"\x03t1"  # [0].topic_results[0].name = "t1"
        b"\x02"  # [0].topic_results[0].results_by_partition: compact array of 1
        b"\x00\x00\x00\x00"  # .partition_index = 0
        b"\x00\x30"  # .partition_error_code = 48 (INVALID_TXN_STATE)
        b"\x00"  # partition result tagged fields: none
        b"\x00"  # topic result tagged fields: none
        b"\x00"  # [0] tagged fields: none
        # results_by_topic_v3_and_below does not exist from v4
        b"\x00"  # body tagged fields: none
    )
    check_response(24, 4, body, expected)


# --- AddOffsetsToTxn (25) ------------------------------------------------------------------------------------


def test_add_offsets_to_txn_v2_request_golden() -> None:
    body = AddOffsetsToTxnRequest(transactional_id="tx", producer_id=4096, producer_epoch=3, group_id="g1")
    expected = (
        b"\x00\x19"  # request_api_key = 25 (AddOffsetsToTxn)
        b"\x00\x02"  # request_api_version = 2 (not flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x02tx"  # transactional_id = "tx"
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # producer_id = 4096
        b"\x00\x03"  # producer_epoch = 3
        b"\x00\x02g1"  # group_id = "g1"
    )
    check_request(header(25, 2), body, expected)


def test_add_offsets_to_txn_v3_request_golden() -> None:
    body = AddOffsetsToTxnRequest(transactional_id="tx", producer_id=4096, producer_epoch=3, group_id="g1")
    expected = (
        b"\x00\x19"  # request_api_key = 25 (AddOffsetsToTxn)
        b"\x00\x03"  # request_api_version = 3 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03tx"  # transactional_id = "tx"
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # producer_id = 4096
        b"\x00\x03"  # producer_epoch = 3
        b"\x03g1"  # group_id = "g1"
        b"\x00"  # body tagged fields: none
    )
    check_request(header(25, 3), body, expected)


def test_add_offsets_to_txn_v0_response_golden() -> None:
    body = AddOffsetsToTxnResponse(throttle_time_ms=0, error_code=51)
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7 (response header v0)
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x33"  # error_code = 51 (CONCURRENT_TRANSACTIONS)
    )
    check_response(25, 0, body, expected)


def test_add_offsets_to_txn_v3_response_golden() -> None:
    body = AddOffsetsToTxnResponse(throttle_time_ms=100, error_code=0)
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x64"  # throttle_time_ms = 100
        b"\x00\x00"  # error_code = 0
        b"\x00"  # body tagged fields: none
    )
    check_response(25, 3, body, expected)


# --- EndTxn (26) ---------------------------------------------------------------------------------------------


def test_end_txn_v2_request_commit_golden() -> None:
    body = EndTxnRequest(transactional_id="tx", producer_id=4096, producer_epoch=3, committed=True)
    expected = (
        b"\x00\x1a"  # request_api_key = 26 (EndTxn)
        b"\x00\x02"  # request_api_version = 2 (not flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x02tx"  # transactional_id = "tx"
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # producer_id = 4096
        b"\x00\x03"  # producer_epoch = 3
        b"\x01"  # committed = true (commit)
    )
    check_request(header(26, 2), body, expected)


def test_end_txn_v4_request_abort_golden() -> None:
    body = EndTxnRequest(transactional_id="tx", producer_id=4096, producer_epoch=3, committed=False)
    expected = (
        b"\x00\x1a"  # request_api_key = 26 (EndTxn)
        b"\x00\x04"  # request_api_version = 4 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03tx"  # transactional_id = "tx"
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # producer_id = 4096
        b"\x00\x03"  # producer_epoch = 3
        b"\x00"  # committed = false (abort)
        b"\x00"  # body tagged fields: none
    )
    check_request(header(26, 4), body, expected)


def test_end_txn_v0_response_golden() -> None:
    body = EndTxnResponse(throttle_time_ms=0, error_code=48)
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7 (response header v0)
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x30"  # error_code = 48 (INVALID_TXN_STATE)
    )
    check_response(26, 0, body, expected)


def test_end_txn_v3_response_golden() -> None:
    body = EndTxnResponse(throttle_time_ms=0, error_code=90)
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x5a"  # error_code = 90 (PRODUCER_FENCED)
        b"\x00"  # body tagged fields: none
    )
    check_response(26, 3, body, expected)


def test_end_txn_v5_response_carries_producer_id_and_epoch_golden() -> None:
    """v5 (KIP-890 transaction version 2) returns the producer id and the epoch the coordinator bumped to."""
    body = EndTxnResponse(throttle_time_ms=0, error_code=0, producer_id=4096, producer_epoch=4)
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # producer_id = 4096 (v5+)
        b"\x00\x04"  # producer_epoch = 4 (v5+)
        b"\x00"  # body tagged fields: none
    )
    check_response(26, 5, body, expected)


def test_end_txn_v4_response_drops_the_ignorable_v5_fields_golden() -> None:
    """ProducerId/ProducerEpoch are `ignorable` in Kafka's schema: below v5 they are left out, not an error."""
    body = EndTxnResponse(throttle_time_ms=0, error_code=0, producer_id=4096, producer_epoch=4)
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0
        # no producer_id / producer_epoch before v5
        b"\x00"  # body tagged fields: none
    )
    assert encode_response(26, 4, 7, body) == sized(expected)
    assert decode_response(26, 4, expected) == (ResponseHeader(correlation_id=7), EndTxnResponse(error_code=0))


# --- WriteTxnMarkers (27) ------------------------------------------------------------------------------------


def test_write_txn_markers_v1_request_golden() -> None:
    body = WriteTxnMarkersRequest(
        markers=[
            WritableTxnMarker(
                producer_id=4096,
                producer_epoch=3,
                transaction_result=False,
                topics=[WritableTxnMarkerTopic(name="t1", partition_indexes=[0])],
                coordinator_epoch=2,
            )
        ]
    )
    expected = (
        b"\x00\x1b"  # request_api_key = 27 (WriteTxnMarkers)
        b"\x00\x01"  # request_api_version = 1 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x02"  # markers: compact array of 1
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # [0].producer_id = 4096
        b"\x00\x03"  # [0].producer_epoch = 3
        b"\x00"  # [0].transaction_result = false (ABORT)
        b"\x02"  # [0].topics: compact array of 1
        b"\x03t1"  # [0].topics[0].name = "t1"
        b"\x02\x00\x00\x00\x00"  # [0].topics[0].partition_indexes = [0]
        b"\x00"  # [0].topics[0] tagged fields: none
        b"\x00\x00\x00\x02"  # [0].coordinator_epoch = 2
        b"\x00"  # [0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_request(header(27, 1), body, expected)


def test_write_txn_markers_v1_response_golden() -> None:
    body = WriteTxnMarkersResponse(
        markers=[
            WritableTxnMarkerResult(
                producer_id=4096,
                topics=[
                    WritableTxnMarkerTopicResult(
                        name="t1", partitions=[WritableTxnMarkerPartitionResult(partition_index=0, error_code=0)]
                    )
                ],
            )
        ]
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x02"  # markers: compact array of 1
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # [0].producer_id = 4096
        b"\x02"  # [0].topics: compact array of 1
        b"\x03t1"  # [0].topics[0].name = "t1"
        b"\x02"  # [0].topics[0].partitions: compact array of 1
        b"\x00\x00\x00\x00"  # .partition_index = 0
        b"\x00\x00"  # .error_code = 0
        b"\x00"  # partition tagged fields: none
        b"\x00"  # topic tagged fields: none
        b"\x00"  # [0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(27, 1, body, expected)


# --- TxnOffsetCommit (28) ------------------------------------------------------------------------------------


def test_txn_offset_commit_v2_request_golden() -> None:
    body = TxnOffsetCommitRequest(
        transactional_id="tx",
        group_id="g1",
        producer_id=4096,
        producer_epoch=3,
        topics=[
            TxnOffsetCommitRequestTopic(
                name="t1",
                partitions=[
                    TxnOffsetCommitRequestPartition(
                        partition_index=0, committed_offset=100, committed_leader_epoch=2, committed_metadata="m"
                    )
                ],
            )
        ],
    )
    expected = (
        b"\x00\x1c"  # request_api_key = 28 (TxnOffsetCommit)
        b"\x00\x02"  # request_api_version = 2 (not flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x02tx"  # transactional_id = "tx"
        b"\x00\x02g1"  # group_id = "g1"
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # producer_id = 4096
        b"\x00\x03"  # producer_epoch = 3
        # generation_id, member_id and group_instance_id exist from v3 (KIP-447)
        b"\x00\x00\x00\x01"  # topics: int32 count 1
        b"\x00\x02t1"  # [0].name = "t1"
        b"\x00\x00\x00\x01"  # [0].partitions: int32 count 1
        b"\x00\x00\x00\x00"  # .partition_index = 0
        b"\x00\x00\x00\x00\x00\x00\x00\x64"  # .committed_offset = 100
        b"\x00\x00\x00\x02"  # .committed_leader_epoch = 2 (v2+)
        b"\x00\x01m"  # .committed_metadata = "m" (nullable string)
    )
    check_request(header(28, 2), body, expected)


def test_txn_offset_commit_v3_request_kip_447_member_fields_golden() -> None:
    """v3 is flexible and adds the group member's identity (KIP-447), checked like an OffsetCommit's."""
    body = TxnOffsetCommitRequest(
        transactional_id="tx",
        group_id="g1",
        producer_id=4096,
        producer_epoch=3,
        generation_id_or_member_epoch=5,
        member_id="m1",
        group_instance_id="i",
        topics=[
            TxnOffsetCommitRequestTopic(
                name="t1",
                partitions=[
                    TxnOffsetCommitRequestPartition(
                        partition_index=0, committed_offset=100, committed_leader_epoch=-1, committed_metadata=None
                    )
                ],
            )
        ],
    )
    expected = (
        b"\x00\x1c"  # request_api_key = 28 (TxnOffsetCommit)
        b"\x00\x03"  # request_api_version = 3 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03tx"  # transactional_id = "tx"
        b"\x03g1"  # group_id = "g1"
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # producer_id = 4096
        b"\x00\x03"  # producer_epoch = 3
        b"\x00\x00\x00\x05"  # generation_id = 5 (v3+)
        b"\x03m1"  # member_id = "m1" (v3+)
        b"\x02i"  # group_instance_id = "i" (v3+, compact nullable)
        b"\x02"  # topics: compact array of 1
        b"\x03t1"  # [0].name = "t1"
        b"\x02"  # [0].partitions: compact array of 1
        b"\x00\x00\x00\x00"  # .partition_index = 0
        b"\x00\x00\x00\x00\x00\x00\x00\x64"  # .committed_offset = 100
        b"\xff\xff\xff\xff"  # .committed_leader_epoch = -1 (unknown)
        b"\x00"  # .committed_metadata = null (compact null)
        b"\x00"  # partition tagged fields: none
        b"\x00"  # [0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_request(header(28, 3), body, expected)


def test_txn_offset_commit_v4_request_without_member_golden() -> None:
    """A producer outside the group sends the member fields' defaults: generation -1, member "", no instance."""
    body = TxnOffsetCommitRequest(
        transactional_id="tx",
        group_id="g1",
        producer_id=4096,
        producer_epoch=3,
        topics=[
            TxnOffsetCommitRequestTopic(
                name="t1",
                partitions=[
                    TxnOffsetCommitRequestPartition(
                        partition_index=1, committed_offset=7, committed_leader_epoch=0, committed_metadata=""
                    )
                ],
            )
        ],
    )
    expected = (
        b"\x00\x1c"  # request_api_key = 28 (TxnOffsetCommit)
        b"\x00\x04"  # request_api_version = 4 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03tx"  # transactional_id = "tx"
        b"\x03g1"  # group_id = "g1"
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # producer_id = 4096
        b"\x00\x03"  # producer_epoch = 3
        b"\xff\xff\xff\xff"  # generation_id = -1 (the default)
        b"\x01"  # member_id = "" (compact: 0+1)
        b"\x00"  # group_instance_id = null
        b"\x02"  # topics: compact array of 1
        b"\x03t1"  # [0].name = "t1"
        b"\x02"  # [0].partitions: compact array of 1
        b"\x00\x00\x00\x01"  # .partition_index = 1
        b"\x00\x00\x00\x00\x00\x00\x00\x07"  # .committed_offset = 7
        b"\x00\x00\x00\x00"  # .committed_leader_epoch = 0
        b"\x01"  # .committed_metadata = "" (empty, not null)
        b"\x00"  # partition tagged fields: none
        b"\x00"  # [0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_request(header(28, 4), body, expected)


def test_txn_offset_commit_v6_request_by_topic_id_golden() -> None:
    """v6 (KIP-1319) names topics by id in place of the name; v5 is v4's layout (KIP-890)."""
    body = TxnOffsetCommitRequest(
        transactional_id="tx",
        group_id="g1",
        producer_id=4096,
        producer_epoch=3,
        generation_id_or_member_epoch=-1,
        member_id="",
        group_instance_id=None,
        topics=[
            TxnOffsetCommitRequestTopic(
                topic_id=uuid.UUID(bytes=bytes(range(1, 17))),
                partitions=[
                    TxnOffsetCommitRequestPartition(
                        partition_index=0, committed_offset=5, committed_leader_epoch=-1, committed_metadata=None
                    )
                ],
            )
        ],
    )
    expected = (
        b"\x00\x1c"  # request_api_key = 28 (TxnOffsetCommit)
        b"\x00\x06"  # request_api_version = 6 (flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03tx"  # transactional_id = "tx"
        b"\x03g1"  # group_id = "g1"
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # producer_id = 4096
        b"\x00\x03"  # producer_epoch = 3
        b"\xff\xff\xff\xff"  # generation_id_or_member_epoch = -1
        b"\x01"  # member_id = ""
        b"\x00"  # group_instance_id = null
        b"\x02"  # topics: compact array of 1
        b"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10"  # topics[0].topic_id (v6+; no name)
        b"\x02"  # topics[0].partitions: compact array of 1
        b"\x00\x00\x00\x00"  # .partition_index = 0
        b"\x00\x00\x00\x00\x00\x00\x00\x05"  # .committed_offset = 5
        b"\xff\xff\xff\xff"  # .committed_leader_epoch = -1
        b"\x00"  # .committed_metadata = null
        b"\x00"  # partition tagged fields: none
        b"\x00"  # topic tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_request(header(28, 6), body, expected)


def test_txn_offset_commit_v0_response_golden() -> None:
    body = TxnOffsetCommitResponse(
        throttle_time_ms=0,
        topics=[
            TxnOffsetCommitResponseTopic(
                name="t1",
                partitions=[
                    TxnOffsetCommitResponsePartition(partition_index=0, error_code=0),
                    TxnOffsetCommitResponsePartition(partition_index=1, error_code=3),
                ],
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7 (response header v0)
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00\x00\x01"  # topics: int32 count 1
        b"\x00\x02t1"  # [0].name = "t1"
        b"\x00\x00\x00\x02"  # [0].partitions: int32 count 2
        b"\x00\x00\x00\x00"  # .partitions[0].partition_index = 0
        b"\x00\x00"  # .partitions[0].error_code = 0
        b"\x00\x00\x00\x01"  # .partitions[1].partition_index = 1
        b"\x00\x03"  # .partitions[1].error_code = 3 (UNKNOWN_TOPIC_OR_PARTITION)
    )
    check_response(28, 0, body, expected)


def test_txn_offset_commit_v3_response_golden() -> None:
    body = TxnOffsetCommitResponse(
        throttle_time_ms=0,
        topics=[
            TxnOffsetCommitResponseTopic(
                name="t1", partitions=[TxnOffsetCommitResponsePartition(partition_index=0, error_code=25)]
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x02"  # topics: compact array of 1
        b"\x03t1"  # [0].name = "t1"
        b"\x02"  # [0].partitions: compact array of 1
        b"\x00\x00\x00\x00"  # .partition_index = 0
        b"\x00\x19"  # .error_code = 25 (UNKNOWN_MEMBER_ID)
        b"\x00"  # partition tagged fields: none
        b"\x00"  # [0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(28, 3, body, expected)


# --- DescribeProducers (61) ----------------------------------------------------------------------------------


def test_describe_producers_v0_request_golden() -> None:
    body = DescribeProducersRequest(topics=[TopicRequest(name="t1", partition_indexes=[0, 1])])
    expected = (
        b"\x00\x3d"  # request_api_key = 61 (DescribeProducers)
        b"\x00\x00"  # request_api_version = 0 (flexible from v0 -> request header v2)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x02"  # topics: compact array of 1
        b"\x03t1"  # [0].name = "t1"
        b"\x03"  # [0].partition_indexes: compact array of 2
        b"\x00\x00\x00\x00"  # [0].partition_indexes[0] = 0
        b"\x00\x00\x00\x01"  # [0].partition_indexes[1] = 1
        b"\x00"  # [0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_request(header(61, 0), body, expected)


def test_describe_producers_v0_response_golden() -> None:
    body = DescribeProducersResponse(
        throttle_time_ms=0,
        topics=[
            TopicResponse(
                name="t1",
                partitions=[
                    PartitionResponse(
                        partition_index=0,
                        error_code=0,
                        error_message=None,
                        active_producers=[
                            ProducerState(
                                producer_id=4096,
                                producer_epoch=3,
                                last_sequence=9,
                                last_timestamp=1700000000000,
                                coordinator_epoch=2,
                                current_txn_start_offset=40,
                            )
                        ],
                    ),
                    PartitionResponse(partition_index=1, error_code=6, error_message="not leader", active_producers=[]),
                ],
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x02"  # topics: compact array of 1
        b"\x03t1"  # [0].name = "t1"
        b"\x03"  # [0].partitions: compact array of 2
        b"\x00\x00\x00\x00"  # .partitions[0].partition_index = 0
        b"\x00\x00"  # .partitions[0].error_code = 0
        b"\x00"  # .partitions[0].error_message = null
        b"\x02"  # .partitions[0].active_producers: compact array of 1
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # ..producer_id = 4096
        b"\x00\x00\x00\x03"  # ..producer_epoch = 3 (int32 here, int16 everywhere else)
        b"\x00\x00\x00\x09"  # ..last_sequence = 9
        b"\x00\x00\x01\x8b\xcf\xe5\x68\x00"  # ..last_timestamp = 1700000000000
        b"\x00\x00\x00\x02"  # ..coordinator_epoch = 2
        b"\x00\x00\x00\x00\x00\x00\x00\x28"  # ..current_txn_start_offset = 40
        b"\x00"  # ..producer tagged fields: none
        b"\x00"  # .partitions[0] tagged fields: none
        b"\x00\x00\x00\x01"  # .partitions[1].partition_index = 1
        b"\x00\x06"  # .partitions[1].error_code = 6 (NOT_LEADER_OR_FOLLOWER)
        b"\x0bnot leader"  # .partitions[1].error_message = "not leader" (compact: 10+1)
        b"\x01"  # .partitions[1].active_producers = []
        b"\x00"  # .partitions[1] tagged fields: none
        b"\x00"  # [0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(61, 0, body, expected)


# --- DeleteRecords (21), OffsetForLeaderEpoch (23), DescribeLogDirs (35) ---------------------------------------


def test_delete_records_v0_request_golden() -> None:
    body = DeleteRecordsRequest(
        topics=[DeleteRecordsTopic(name="t1", partitions=[DeleteRecordsPartition(partition_index=0, offset=5)])],
        timeout_ms=5000,
    )
    expected = (
        b"\x00\x15"  # request_api_key = 21 (DeleteRecords)
        b"\x00\x00"  # request_api_version = 0
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x00\x00\x01"  # topics: array of 1
        b"\x00\x02t1"  # [0].name = "t1"
        b"\x00\x00\x00\x01"  # [0].partitions: array of 1
        b"\x00\x00\x00\x00"  # .partition_index = 0
        b"\x00\x00\x00\x00\x00\x00\x00\x05"  # .offset = 5
        b"\x00\x00\x13\x88"  # timeout_ms = 5000
    )
    check_request(header(21, 0), body, expected)


def test_delete_records_v2_response_golden() -> None:
    """A moved log start (low watermark 5) and an offset past the high watermark (OFFSET_OUT_OF_RANGE, -1)."""
    body = DeleteRecordsResponse(
        throttle_time_ms=0,
        topics=[
            DeleteRecordsTopicResult(
                name="t1",
                partitions=[
                    DeleteRecordsPartitionResult(partition_index=0, low_watermark=5, error_code=0),
                    DeleteRecordsPartitionResult(partition_index=1, low_watermark=-1, error_code=1),
                ],
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x02"  # topics: compact array of 1
        b"\x03t1"  # [0].name = "t1"
        b"\x03"  # [0].partitions: compact array of 2
        b"\x00\x00\x00\x00"  # .partitions[0].partition_index = 0
        b"\x00\x00\x00\x00\x00\x00\x00\x05"  # .partitions[0].low_watermark = 5
        b"\x00\x00"  # .partitions[0].error_code = 0
        b"\x00"  # .partitions[0] tagged fields: none
        b"\x00\x00\x00\x01"  # .partitions[1].partition_index = 1
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # .partitions[1].low_watermark = -1
        b"\x00\x01"  # .partitions[1].error_code = 1 (OFFSET_OUT_OF_RANGE)
        b"\x00"  # .partitions[1] tagged fields: none
        b"\x00"  # [0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(21, 2, body, expected)


def test_offset_for_leader_epoch_v3_request_golden() -> None:
    body = OffsetForLeaderEpochRequest(
        replica_id=-1,
        topics=[
            OffsetForLeaderTopic(
                topic="t1", partitions=[OffsetForLeaderPartition(partition=0, current_leader_epoch=2, leader_epoch=1)]
            )
        ],
    )
    expected = (
        b"\x00\x17"  # request_api_key = 23 (OffsetForLeaderEpoch)
        b"\x00\x03"  # request_api_version = 3 (adds replica_id; flexible from v4)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\xff\xff\xff\xff"  # replica_id = -1 (a consumer)
        b"\x00\x00\x00\x01"  # topics: array of 1
        b"\x00\x02t1"  # [0].topic = "t1"
        b"\x00\x00\x00\x01"  # [0].partitions: array of 1
        b"\x00\x00\x00\x00"  # .partition = 0
        b"\x00\x00\x00\x02"  # .current_leader_epoch = 2
        b"\x00\x00\x00\x01"  # .leader_epoch = 1
    )
    check_request(header(23, 3), body, expected)


def test_offset_for_leader_epoch_v4_response_golden() -> None:
    """An end offset found in the epoch cache and a fenced request (epoch and offset -1)."""
    body = OffsetForLeaderEpochResponse(
        throttle_time_ms=0,
        topics=[
            OffsetForLeaderTopicResult(
                topic="t1",
                partitions=[
                    EpochEndOffset(error_code=0, partition=0, leader_epoch=1, end_offset=42),
                    EpochEndOffset(error_code=74, partition=1, leader_epoch=-1, end_offset=-1),
                ],
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x02"  # topics: compact array of 1
        b"\x03t1"  # [0].topic = "t1"
        b"\x03"  # [0].partitions: compact array of 2
        b"\x00\x00"  # .partitions[0].error_code = 0
        b"\x00\x00\x00\x00"  # .partitions[0].partition = 0
        b"\x00\x00\x00\x01"  # .partitions[0].leader_epoch = 1
        b"\x00\x00\x00\x00\x00\x00\x00\x2a"  # .partitions[0].end_offset = 42
        b"\x00"  # .partitions[0] tagged fields: none
        b"\x00\x4a"  # .partitions[1].error_code = 74 (FENCED_LEADER_EPOCH)
        b"\x00\x00\x00\x01"  # .partitions[1].partition = 1
        b"\xff\xff\xff\xff"  # .partitions[1].leader_epoch = -1
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # .partitions[1].end_offset = -1
        b"\x00"  # .partitions[1] tagged fields: none
        b"\x00"  # [0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(23, 4, body, expected)


def test_describe_log_dirs_v1_request_golden() -> None:
    """A null topic list asks for every partition."""
    expected = (
        b"\x00\x23"  # request_api_key = 35 (DescribeLogDirs)
        b"\x00\x01"  # request_api_version = 1
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\xff\xff\xff\xff"  # topics = null
    )
    check_request(header(35, 1), DescribeLogDirsRequest(topics=None), expected)


def test_describe_log_dirs_v4_response_golden() -> None:
    body = DescribeLogDirsResponse(
        throttle_time_ms=0,
        error_code=0,
        results=[
            DescribeLogDirsResult(
                error_code=0,
                log_dir="/d",
                topics=[
                    DescribeLogDirsTopic(
                        name="t1",
                        partitions=[
                            DescribeLogDirsPartition(
                                partition_index=0, partition_size=100, offset_lag=0, is_future_key=False
                            )
                        ],
                    )
                ],
                total_bytes=1000,
                usable_bytes=500,
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0 (v3+)
        b"\x02"  # results: compact array of 1
        b"\x00\x00"  # [0].error_code = 0
        b"\x03/d"  # [0].log_dir = "/d"
        b"\x02"  # [0].topics: compact array of 1
        b"\x03t1"  # .topics[0].name = "t1"
        b"\x02"  # .topics[0].partitions: compact array of 1
        b"\x00\x00\x00\x00"  # ..partition_index = 0
        b"\x00\x00\x00\x00\x00\x00\x00\x64"  # ..partition_size = 100
        b"\x00\x00\x00\x00\x00\x00\x00\x00"  # ..offset_lag = 0
        b"\x00"  # ..is_future_key = false
        b"\x00"  # ..partition tagged fields: none
        b"\x00"  # .topics[0] tagged fields: none
        b"\x00\x00\x00\x00\x00\x00\x03\xe8"  # [0].total_bytes = 1000 (v4+)
        b"\x00\x00\x00\x00\x00\x00\x01\xf4"  # [0].usable_bytes = 500 (v4+)
        b"\x00"  # [0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(35, 4, body, expected)


# --- DescribeTransactions (65) -------------------------------------------------------------------------------


def test_describe_transactions_v0_request_golden() -> None:
    body = DescribeTransactionsRequest(transactional_ids=["tx", "ty"])
    expected = (
        b"\x00\x41"  # request_api_key = 65 (DescribeTransactions)
        b"\x00\x00"  # request_api_version = 0 (flexible from v0)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x03"  # transactional_ids: compact array of 2
        b"\x03tx"  # [0] = "tx"
        b"\x03ty"  # [1] = "ty"
        b"\x00"  # body tagged fields: none
    )
    check_request(header(65, 0), body, expected)


def test_describe_transactions_v0_response_golden() -> None:
    """An ongoing transaction, an id with none running (start time -1, T67) and an unknown id (defaults)."""
    body = DescribeTransactionsResponse(
        throttle_time_ms=0,
        transaction_states=[
            DescribedTransactionState(
                error_code=0,
                transactional_id="tx",
                transaction_state="Ongoing",
                transaction_timeout_ms=60000,
                transaction_start_time_ms=1700000000000,
                producer_id=4096,
                producer_epoch=3,
                topics=[TopicData(topic="t1", partitions=[0, 1])],
            ),
            DescribedTransactionState(
                error_code=0,
                transactional_id="ty",
                transaction_state="Empty",
                transaction_timeout_ms=60000,
                transaction_start_time_ms=-1,
                producer_id=4097,
                producer_epoch=0,
                topics=[],
            ),
            DescribedTransactionState(error_code=105, transactional_id="tz"),
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x04"  # transaction_states: compact array of 3
        b"\x00\x00"  # [0].error_code = 0
        b"\x03tx"  # [0].transactional_id = "tx"
        b"\x08Ongoing"  # [0].transaction_state = "Ongoing" (compact: 7+1)
        b"\x00\x00\xea\x60"  # [0].transaction_timeout_ms = 60000
        b"\x00\x00\x01\x8b\xcf\xe5\x68\x00"  # [0].transaction_start_time_ms = 1700000000000
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # [0].producer_id = 4096
        b"\x00\x03"  # [0].producer_epoch = 3
        b"\x02"  # [0].topics: compact array of 1
        b"\x03t1"  # [0].topics[0].topic = "t1"
        b"\x03\x00\x00\x00\x00\x00\x00\x00\x01"  # [0].topics[0].partitions = [0, 1]
        b"\x00"  # [0].topics[0] tagged fields: none
        b"\x00"  # [0] tagged fields: none
        b"\x00\x00"  # [1].error_code = 0
        b"\x03ty"  # [1].transactional_id = "ty"
        b"\x06Empty"  # [1].transaction_state = "Empty" (compact: 5+1)
        b"\x00\x00\xea\x60"  # [1].transaction_timeout_ms = 60000
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # [1].transaction_start_time_ms = -1 (no transaction running)
        b"\x00\x00\x00\x00\x00\x00\x10\x01"  # [1].producer_id = 4097
        b"\x00\x00"  # [1].producer_epoch = 0
        b"\x01"  # [1].topics = []
        b"\x00"  # [1] tagged fields: none
        b"\x00\x69"  # [2].error_code = 105 (TRANSACTIONAL_ID_NOT_FOUND)
        b"\x03tz"  # [2].transactional_id = "tz"
        b"\x01"  # [2].transaction_state = "" (the schema's default)
        b"\x00\x00\x00\x00"  # [2].transaction_timeout_ms = 0
        b"\x00\x00\x00\x00\x00\x00\x00\x00"  # [2].transaction_start_time_ms = 0 (default, not -1)
        b"\x00\x00\x00\x00\x00\x00\x00\x00"  # [2].producer_id = 0
        b"\x00\x00"  # [2].producer_epoch = 0
        b"\x01"  # [2].topics = []
        b"\x00"  # [2] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(65, 0, body, expected)


# --- ListTransactions (66) -----------------------------------------------------------------------------------


def test_list_transactions_v0_request_filters_golden() -> None:
    body = ListTransactionsRequest(state_filters=["Ongoing"], producer_id_filters=[4096])
    expected = (
        b"\x00\x42"  # request_api_key = 66 (ListTransactions)
        b"\x00\x00"  # request_api_version = 0 (flexible from v0)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x02"  # state_filters: compact array of 1
        b"\x08Ongoing"  # state_filters[0] = "Ongoing"
        b"\x02"  # producer_id_filters: compact array of 1
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # producer_id_filters[0] = 4096 (int64)
        # duration_filter exists from v1
        b"\x00"  # body tagged fields: none
    )
    check_request(header(66, 0), body, expected)


def test_list_transactions_v1_request_duration_filter_golden() -> None:
    body = ListTransactionsRequest(state_filters=[], producer_id_filters=[], duration_filter=60000)
    expected = (
        b"\x00\x42"  # request_api_key = 66 (ListTransactions)
        b"\x00\x01"  # request_api_version = 1
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x01"  # state_filters = [] (every state)
        b"\x01"  # producer_id_filters = [] (every producer)
        b"\x00\x00\x00\x00\x00\x00\xea\x60"  # duration_filter = 60000 ms (v1+; -1 = off)
        b"\x00"  # body tagged fields: none
    )
    check_request(header(66, 1), body, expected)


def test_list_transactions_v2_request_id_pattern_golden() -> None:
    """v2 (KIP-1152) appends a nullable transactional id pattern after the duration filter."""
    body = ListTransactionsRequest(
        state_filters=[], producer_id_filters=[], duration_filter=-1, transactional_id_pattern="tx-.*"
    )
    expected = (
        b"\x00\x42"  # request_api_key = 66 (ListTransactions)
        b"\x00\x02"  # request_api_version = 2
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x01"  # state_filters = [] (every state)
        b"\x01"  # producer_id_filters = [] (every producer)
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # duration_filter = -1 (off)
        b"\x06tx-.*"  # transactional_id_pattern = "tx-.*" (compact string, v2+)
        b"\x00"  # body tagged fields: none
    )
    check_request(header(66, 2), body, expected)


def test_list_transactions_v0_response_golden() -> None:
    body = ListTransactionsResponse(
        throttle_time_ms=0,
        error_code=0,
        unknown_state_filters=["Bogus"],
        transaction_states=[
            ListedTransactionState(transactional_id="tx", producer_id=4096, transaction_state="Ongoing")
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0
        b"\x02"  # unknown_state_filters: compact array of 1
        b"\x06Bogus"  # unknown_state_filters[0] = "Bogus" (compact: 5+1)
        b"\x02"  # transaction_states: compact array of 1
        b"\x03tx"  # [0].transactional_id = "tx"
        b"\x00\x00\x00\x00\x00\x00\x10\x00"  # [0].producer_id = 4096
        b"\x08Ongoing"  # [0].transaction_state = "Ongoing"
        b"\x00"  # [0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(66, 0, body, expected)


def test_list_transactions_v1_response_load_in_progress_golden() -> None:
    body = ListTransactionsResponse(throttle_time_ms=0, error_code=14, unknown_state_filters=[], transaction_states=[])
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x0e"  # error_code = 14 (COORDINATOR_LOAD_IN_PROGRESS)
        b"\x01"  # unknown_state_filters = []
        b"\x01"  # transaction_states = []
        b"\x00"  # body tagged fields: none
    )
    check_response(66, 1, body, expected)


# --- Issue #16's cluster APIs: DescribeCluster (60), DescribeTopicPartitions (75), ElectLeaders (43), ----------
# --- DescribeQuorum (55), List/AlterPartitionReassignments (46/45), telemetry (71/72), Metadata v13, ApiVersions v5


def test_api_versions_v5_request_names_the_cluster_and_node_golden() -> None:
    body = ApiVersionsRequest(client_software_name="c", client_software_version="1", cluster_id="k", node_id=1)
    expected = (
        b"\x00\x12"  # request_api_key = 18 (ApiVersions)
        b"\x00\x05"  # request_api_version = 5 (flexible -> request header v2)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x02c"  # client_software_name = "c" (compact: 1+1)
        b"\x021"  # client_software_version = "1"
        b"\x02k"  # cluster_id = "k" (v5+, nullable compact string)
        b"\x00\x00\x00\x01"  # node_id = 1 (v5+)
        b"\x00"  # body tagged fields: none
    )
    check_request(header(18, 5), body, expected)


def test_metadata_v13_response_top_level_error_code_golden() -> None:
    body = MetadataResponse(
        brokers=[MetadataResponseBroker(node_id=1, host="h", port=9092, rack=None)],
        cluster_id="c",
        controller_id=1,
        topics=[],
        error_code=0,
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x02"  # brokers: compact array of 1
        b"\x00\x00\x00\x01"  # [0].node_id = 1
        b"\x02h"  # [0].host = "h"
        b"\x00\x00\x23\x84"  # [0].port = 9092
        b"\x00"  # [0].rack = null
        b"\x00"  # [0] tagged fields: none
        b"\x02c"  # cluster_id = "c"
        b"\x00\x00\x00\x01"  # controller_id = 1
        b"\x01"  # topics: compact array of 0
        b"\x00\x00"  # error_code = 0 (v13+; no cluster_authorized_operations after v10)
        b"\x00"  # body tagged fields: none
    )
    check_response(3, 13, body, expected)


def test_describe_cluster_v2_request_golden() -> None:
    body = DescribeClusterRequest(
        include_cluster_authorized_operations=True, endpoint_type=1, include_fenced_brokers=True
    )
    expected = (
        b"\x00\x3c"  # request_api_key = 60 (DescribeCluster)
        b"\x00\x02"  # request_api_version = 2 (flexible from v0 -> request header v2)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x01"  # include_cluster_authorized_operations = true
        b"\x01"  # endpoint_type = 1 (brokers; v1+)
        b"\x01"  # include_fenced_brokers = true (v2+)
        b"\x00"  # body tagged fields: none
    )
    check_request(header(60, 2), body, expected)


def test_describe_cluster_v1_response_golden() -> None:
    body = DescribeClusterResponse(
        error_message=None,
        endpoint_type=1,
        cluster_id="c1",
        controller_id=1,
        brokers=[DescribeClusterBroker(broker_id=1, host="h", port=9092, rack=None)],
        cluster_authorized_operations=8096,
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0
        b"\x00"  # error_message = null
        b"\x01"  # endpoint_type = 1 (v1+)
        b"\x03c1"  # cluster_id = "c1"
        b"\x00\x00\x00\x01"  # controller_id = 1
        b"\x02"  # brokers: compact array of 1
        b"\x00\x00\x00\x01"  # [0].broker_id = 1
        b"\x02h"  # [0].host = "h"
        b"\x00\x00\x23\x84"  # [0].port = 9092
        b"\x00"  # [0].rack = null (is_fenced only from v2)
        b"\x00"  # [0] tagged fields: none
        b"\x00\x00\x1f\xa0"  # cluster_authorized_operations = 8096
        b"\x00"  # body tagged fields: none
    )
    check_response(60, 1, body, expected)


def test_describe_topic_partitions_v0_request_with_cursor_golden() -> None:
    body = DescribeTopicPartitionsRequest(
        topics=[DtpTopicRequest(name="t1")],
        response_partition_limit=2,
        cursor=DtpCursor(topic_name="t1", partition_index=1),
    )
    expected = (
        b"\x00\x4b"  # request_api_key = 75 (DescribeTopicPartitions)
        b"\x00\x00"  # request_api_version = 0 (flexible from v0)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x02"  # topics: compact array of 1
        b"\x03t1"  # [0].name = "t1"
        b"\x00"  # [0] tagged fields: none
        b"\x00\x00\x00\x02"  # response_partition_limit = 2
        b"\x01"  # cursor: present (nullable struct marker, int8 1)
        b"\x03t1"  # cursor.topic_name = "t1"
        b"\x00\x00\x00\x01"  # cursor.partition_index = 1
        b"\x00"  # cursor tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_request(header(75, 0), body, expected)


def test_describe_topic_partitions_v0_response_golden() -> None:
    body = DescribeTopicPartitionsResponse(
        topics=[
            DescribeTopicPartitionsResponseTopic(
                name="t1",
                topic_id=uuid.UUID(int=1),
                partitions=[
                    DescribeTopicPartitionsResponsePartition(
                        partition_index=0,
                        leader_id=1,
                        leader_epoch=0,
                        replica_nodes=[1],
                        isr_nodes=[1],
                        eligible_leader_replicas=None,
                        last_known_elr=[],
                    )
                ],
                topic_authorized_operations=3576,
            )
        ],
        next_cursor=None,
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x02"  # topics: compact array of 1
        b"\x00\x00"  # [0].error_code = 0
        b"\x03t1"  # [0].name = "t1" (nullable compact string)
        + b"\x00"
        * 15
        + b"\x01"  # [0].topic_id = 00000000-0000-0000-0000-000000000001
        b"\x00"  # [0].is_internal = false
        b"\x02"  # [0].partitions: compact array of 1
        b"\x00\x00"  # ..error_code = 0
        b"\x00\x00\x00\x00"  # ..partition_index = 0
        b"\x00\x00\x00\x01"  # ..leader_id = 1
        b"\x00\x00\x00\x00"  # ..leader_epoch = 0
        b"\x02\x00\x00\x00\x01"  # ..replica_nodes = [1]
        b"\x02\x00\x00\x00\x01"  # ..isr_nodes = [1]
        b"\x00"  # ..eligible_leader_replicas = null (compact nullable array)
        b"\x01"  # ..last_known_elr = []
        b"\x01"  # ..offline_replicas = []
        b"\x00"  # ..partition tagged fields: none
        b"\x00\x00\x0d\xf8"  # [0].topic_authorized_operations = 3576
        b"\x00"  # [0] tagged fields: none
        b"\xff"  # next_cursor = null (nullable struct marker, int8 -1)
        b"\x00"  # body tagged fields: none
    )
    check_response(75, 0, body, expected)


def test_elect_leaders_v0_request_golden() -> None:
    body = ElectLeadersRequest(topic_partitions=[ElectTopicPartitions(topic="t1", partitions=[0])], timeout_ms=60000)
    expected = (
        b"\x00\x2b"  # request_api_key = 43 (ElectLeaders)
        b"\x00\x00"  # request_api_version = 0 (not flexible -> request header v1)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00\x00\x00\x01"  # topic_partitions: array of 1 (no election_type before v1)
        b"\x00\x02t1"  # [0].topic = "t1"
        b"\x00\x00\x00\x01"  # [0].partitions: array of 1
        b"\x00\x00\x00\x00"  # [0].partitions[0] = 0
        b"\x00\x00\xea\x60"  # timeout_ms = 60000
    )
    check_request(header(43, 0), body, expected)


def test_elect_leaders_v1_request_every_partition_golden() -> None:
    body = ElectLeadersRequest(election_type=1, topic_partitions=None, timeout_ms=60000)
    expected = (
        b"\x00\x2b"  # request_api_key = 43 (ElectLeaders)
        b"\x00\x01"  # request_api_version = 1 (not flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x01"  # election_type = 1 (unclean; v1+)
        b"\xff\xff\xff\xff"  # topic_partitions = null (every partition)
        b"\x00\x00\xea\x60"  # timeout_ms = 60000
    )
    check_request(header(43, 1), body, expected)


def test_elect_leaders_v2_response_golden() -> None:
    body = ElectLeadersResponse(
        error_code=0,
        replica_election_results=[
            ReplicaElectionResult(
                topic="t1", partition_result=[ElectPartitionResult(partition_id=0, error_code=84, error_message="m")]
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none (flexible from v2)
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0 (v1+)
        b"\x02"  # replica_election_results: compact array of 1
        b"\x03t1"  # [0].topic = "t1"
        b"\x02"  # [0].partition_result: compact array of 1
        b"\x00\x00\x00\x00"  # ..partition_id = 0
        b"\x00\x54"  # ..error_code = 84 (ELECTION_NOT_NEEDED)
        b"\x02m"  # ..error_message = "m"
        b"\x00"  # ..tagged fields: none
        b"\x00"  # [0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(43, 2, body, expected)


def test_describe_quorum_v0_request_golden() -> None:
    body = DescribeQuorumRequest(
        topics=[QuorumTopicData(topic_name="m", partitions=[QuorumPartitionData(partition_index=0)])]
    )
    expected = (
        b"\x00\x37"  # request_api_key = 55 (DescribeQuorum)
        b"\x00\x00"  # request_api_version = 0 (flexible from v0)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x02"  # topics: compact array of 1
        b"\x02m"  # [0].topic_name = "m"
        b"\x02"  # [0].partitions: compact array of 1
        b"\x00\x00\x00\x00"  # ..partition_index = 0
        b"\x00"  # ..tagged fields: none
        b"\x00"  # [0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_request(header(55, 0), body, expected)


def test_describe_quorum_v2_response_golden() -> None:
    """The response's PartitionData is generated as DescribeQuorumResponsePartitionData: the request has a
    PartitionData of its own (protocol/codegen.py)."""
    voter = ReplicaState(
        replica_id=1,
        replica_directory_id=uuid.UUID(int=0),
        log_end_offset=5,
        last_fetch_timestamp=-1,
        last_caught_up_timestamp=-1,
    )
    body = DescribeQuorumResponse(
        error_code=0,
        error_message=None,
        topics=[
            DescribeQuorumResponseTopicData(
                topic_name="m",
                partitions=[
                    DescribeQuorumResponsePartitionData(
                        partition_index=0,
                        error_code=0,
                        error_message=None,
                        leader_id=1,
                        leader_epoch=1,
                        high_watermark=5,
                        current_voters=[voter],
                        observers=[],
                    )
                ],
            )
        ],
        nodes=[QuorumNode(node_id=1, listeners=[QuorumListener(name="P", host="h", port=9092)])],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00"  # error_code = 0
        b"\x00"  # error_message = null (v2+)
        b"\x02"  # topics: compact array of 1
        b"\x02m"  # [0].topic_name = "m"
        b"\x02"  # [0].partitions: compact array of 1
        b"\x00\x00\x00\x00"  # ..partition_index = 0
        b"\x00\x00"  # ..error_code = 0
        b"\x00"  # ..error_message = null (v2+)
        b"\x00\x00\x00\x01"  # ..leader_id = 1
        b"\x00\x00\x00\x01"  # ..leader_epoch = 1
        b"\x00\x00\x00\x00\x00\x00\x00\x05"  # ..high_watermark = 5
        b"\x02"  # ..current_voters: compact array of 1
        b"\x00\x00\x00\x01"  # ...replica_id = 1
        + b"\x00"
        * 16  # ...replica_directory_id = zero uuid (v2+)
        + b"\x00\x00\x00\x00\x00\x00\x00\x05"  # ...log_end_offset = 5
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # ...last_fetch_timestamp = -1 (v1+)
        b"\xff\xff\xff\xff\xff\xff\xff\xff"  # ...last_caught_up_timestamp = -1 (v1+)
        b"\x00"  # ...voter tagged fields: none
        b"\x01"  # ..observers: compact array of 0
        b"\x00"  # ..partition tagged fields: none
        b"\x00"  # [0] tagged fields: none
        b"\x02"  # nodes: compact array of 1 (v2+)
        b"\x00\x00\x00\x01"  # [0].node_id = 1
        b"\x02"  # [0].listeners: compact array of 1
        b"\x02P"  # ..name = "P"
        b"\x02h"  # ..host = "h"
        b"\x23\x84"  # ..port = 9092 (uint16)
        b"\x00"  # ..listener tagged fields: none
        b"\x00"  # [0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(55, 2, body, expected)


def test_list_partition_reassignments_v0_request_and_response_golden() -> None:
    request = (
        b"\x00\x2e"  # request_api_key = 46 (ListPartitionReassignments)
        b"\x00\x00"  # request_api_version = 0 (flexible from v0)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x00\x00\xea\x60"  # timeout_ms = 60000
        b"\x00"  # topics = null (every reassignment)
        b"\x00"  # body tagged fields: none
    )
    check_request(header(46, 0), ListPartitionReassignmentsRequest(timeout_ms=60000, topics=None), request)
    response = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0
        b"\x00"  # error_message = null
        b"\x01"  # topics: compact array of 0
        b"\x00"  # body tagged fields: none
    )
    check_response(46, 0, ListPartitionReassignmentsResponse(error_message=None), response)


def test_alter_partition_reassignments_v1_request_golden() -> None:
    body = AlterPartitionReassignmentsRequest(
        timeout_ms=60000,
        allow_replication_factor_change=False,
        topics=[
            ReassignableTopic(
                name="t1",
                partitions=[
                    ReassignablePartition(partition_index=0, replicas=[1]),
                    ReassignablePartition(partition_index=1, replicas=None),
                ],
            )
        ],
    )
    expected = (
        b"\x00\x2d"  # request_api_key = 45 (AlterPartitionReassignments)
        b"\x00\x01"  # request_api_version = 1 (flexible from v0)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x00\x00\xea\x60"  # timeout_ms = 60000
        b"\x00"  # allow_replication_factor_change = false (v1+)
        b"\x02"  # topics: compact array of 1
        b"\x03t1"  # [0].name = "t1"
        b"\x03"  # [0].partitions: compact array of 2
        b"\x00\x00\x00\x00"  # ..[0].partition_index = 0
        b"\x02\x00\x00\x00\x01"  # ..[0].replicas = [1]
        b"\x00"  # ..[0] tagged fields: none
        b"\x00\x00\x00\x01"  # ..[1].partition_index = 1
        b"\x00"  # ..[1].replicas = null (cancel)
        b"\x00"  # ..[1] tagged fields: none
        b"\x00"  # [0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_request(header(45, 1), body, expected)


def test_alter_partition_reassignments_v0_response_golden() -> None:
    body = AlterPartitionReassignmentsResponse(
        error_message=None,
        responses=[
            ReassignableTopicResponse(
                name="t1",
                partitions=[ReassignablePartitionResponse(partition_index=0, error_code=85, error_message=None)],
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0 (no allow_replication_factor_change before v1)
        b"\x00\x00"  # error_code = 0
        b"\x00"  # error_message = null
        b"\x02"  # responses: compact array of 1
        b"\x03t1"  # [0].name = "t1"
        b"\x02"  # [0].partitions: compact array of 1
        b"\x00\x00\x00\x00"  # ..partition_index = 0
        b"\x00\x55"  # ..error_code = 85 (NO_REASSIGNMENT_IN_PROGRESS)
        b"\x00"  # ..error_message = null
        b"\x00"  # ..tagged fields: none
        b"\x00"  # [0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(45, 0, body, expected)


def test_get_telemetry_subscriptions_v0_golden() -> None:
    request = (
        b"\x00\x47"  # request_api_key = 71 (GetTelemetrySubscriptions)
        b"\x00\x00"  # request_api_version = 0 (flexible from v0)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        + b"\x00" * 16  # client_instance_id = zero uuid (a new client)
        + b"\x00"  # body tagged fields: none
    )
    check_request(header(71, 0), GetTelemetrySubscriptionsRequest(), request)
    body = GetTelemetrySubscriptionsResponse(
        client_instance_id=uuid.UUID(int=2),
        subscription_id=-1,
        accepted_compression_types=[4, 3],
        push_interval_ms=300000,
        telemetry_max_bytes=1048576,
        delta_temporality=True,
        requested_metrics=[],
    )
    response = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0
        + b"\x00"
        * 15
        + b"\x02"  # client_instance_id = 00000000-0000-0000-0000-000000000002
        b"\xff\xff\xff\xff"  # subscription_id = -1
        b"\x03\x04\x03"  # accepted_compression_types = [4 (zstd), 3 (lz4)] (compact array of int8)
        b"\x00\x04\x93\xe0"  # push_interval_ms = 300000
        b"\x00\x10\x00\x00"  # telemetry_max_bytes = 1048576
        b"\x01"  # delta_temporality = true
        b"\x01"  # requested_metrics: compact array of 0 (no metrics subscribed)
        b"\x00"  # body tagged fields: none
    )
    check_response(71, 0, body, response)


def test_push_telemetry_v0_golden() -> None:
    body = PushTelemetryRequest(
        client_instance_id=uuid.UUID(int=2), subscription_id=7, terminating=True, compression_type=0, metrics=b"ab"
    )
    request = (
        b"\x00\x48"  # request_api_key = 72 (PushTelemetry)
        b"\x00\x00"  # request_api_version = 0 (flexible from v0)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        + b"\x00"
        * 15
        + b"\x02"  # client_instance_id = 00000000-0000-0000-0000-000000000002
        b"\x00\x00\x00\x07"  # subscription_id = 7
        b"\x01"  # terminating = true
        b"\x00"  # compression_type = 0 (none)
        b"\x03ab"  # metrics = b"ab" (compact bytes: 2+1)
        b"\x00"  # body tagged fields: none
    )
    check_request(header(72, 0), body, request)
    response = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x59"  # error_code = 89 (THROTTLING_QUOTA_EXCEEDED)
        b"\x00"  # body tagged fields: none
    )
    check_response(72, 0, PushTelemetryResponse(error_code=89), response)


# --- Coverage guard ------------------------------------------------------------------------------------------


def _golden_versions() -> set[tuple[int, int]]:
    """(api_key, api_version) of every golden frame in the test_golden*.py files, read from their source."""
    source = "".join(path.read_text() for path in pathlib.Path(__file__).parent.glob("test_golden*.py"))
    calls = re.findall(r"(?:header|check_response|encode_response|decode_response)\((\d+), (\d+)", source)
    return {(int(key), int(version)) for key, version in calls}


def test_every_registered_api_has_a_golden_test() -> None:
    covered = _golden_versions()
    for key, spec in APIS.items():
        versions = [version for api_key, version in covered if api_key == key]
        assert versions, f"no golden test for {ApiKey(key).name}"
        assert all(spec.supports(version) for version in versions), (ApiKey(key).name, versions)


def test_common_apis_have_flexible_and_non_flexible_goldens() -> None:
    covered = _golden_versions()
    common = (
        ApiKey.JOIN_GROUP,
        ApiKey.SYNC_GROUP,
        ApiKey.HEARTBEAT,
        ApiKey.OFFSET_COMMIT,
        ApiKey.OFFSET_FETCH,
        ApiKey.METADATA,
        ApiKey.API_VERSIONS,
        ApiKey.ADD_PARTITIONS_TO_TXN,
        ApiKey.ADD_OFFSETS_TO_TXN,
        ApiKey.END_TXN,
        ApiKey.TXN_OFFSET_COMMIT,
    )
    for key in common:
        kinds = {APIS[key].flexible(version) for api_key, version in covered if api_key == key}
        assert kinds == {True, False}, key.name


# --- DescribeAcls (29), CreateAcls (30), DeleteAcls (31) -------------------------------------------------------


def test_describe_acls_v1_request_golden() -> None:
    body = DescribeAclsRequest(
        resource_type_filter=2,
        resource_name_filter=None,
        pattern_type_filter=2,
        principal_filter="User:a",
        host_filter=None,
        operation=1,
        permission_type=3,
    )
    expected = (
        b"\x00\x1d"  # request_api_key = 29 (DescribeAcls)
        b"\x00\x01"  # request_api_version = 1 (not flexible)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x02"  # resource_type_filter = 2 (TOPIC)
        b"\xff\xff"  # resource_name_filter = null
        b"\x02"  # pattern_type_filter = 2 (MATCH, v1+)
        b"\x00\x06User:a"  # principal_filter = "User:a"
        b"\xff\xff"  # host_filter = null
        b"\x01"  # operation = 1 (ANY)
        b"\x03"  # permission_type = 3 (ALLOW)
    )
    check_request(header(29, 1), body, expected)


def test_describe_acls_v2_response_golden() -> None:
    body = DescribeAclsResponse(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        resources=[
            DescribeAclsResource(
                resource_type=2,
                resource_name="t",
                pattern_type=3,
                acls=[AclDescription(principal="User:a", host="*", operation=3, permission_type=3)],
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00"  # response header v1 tagged fields: none
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00"  # error_code = 0
        b"\x00"  # error_message = null (compact)
        b"\x02"  # resources: compact array of 1
        b"\x02"  # resources[0].resource_type = 2 (TOPIC)
        b"\x02t"  # resources[0].resource_name = "t"
        b"\x03"  # resources[0].pattern_type = 3 (LITERAL)
        b"\x02"  # resources[0].acls: compact array of 1
        b"\x07User:a"  # acls[0].principal = "User:a"
        b"\x02*"  # acls[0].host = "*"
        b"\x03"  # acls[0].operation = 3 (READ)
        b"\x03"  # acls[0].permission_type = 3 (ALLOW)
        b"\x00"  # acls[0] tagged fields: none
        b"\x00"  # resources[0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_response(29, 2, body, expected)


def test_create_acls_v2_request_golden() -> None:
    body = CreateAclsRequest(
        creations=[
            AclCreation(
                resource_type=3,
                resource_name="g",
                resource_pattern_type=4,
                principal="User:*",
                host="*",
                operation=2,
                permission_type=2,
            )
        ]
    )
    expected = (
        b"\x00\x1e"  # request_api_key = 30 (CreateAcls)
        b"\x00\x02"  # request_api_version = 2 (flexible from v2)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x02"  # creations: compact array of 1
        b"\x03"  # creations[0].resource_type = 3 (GROUP)
        b"\x02g"  # creations[0].resource_name = "g"
        b"\x04"  # creations[0].resource_pattern_type = 4 (PREFIXED)
        b"\x07User:*"  # creations[0].principal = "User:*"
        b"\x02*"  # creations[0].host = "*"
        b"\x02"  # creations[0].operation = 2 (ALL)
        b"\x02"  # creations[0].permission_type = 2 (DENY)
        b"\x00"  # creations[0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_request(header(30, 2), body, expected)


def test_create_acls_v1_response_golden() -> None:
    body = CreateAclsResponse(
        throttle_time_ms=0,
        results=[
            AclCreationResult(error_code=0, error_message=""),
            AclCreationResult(error_code=42, error_message="x"),
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7 (response header v0)
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00\x00\x02"  # results: array of 2
        b"\x00\x00"  # results[0].error_code = 0
        b"\x00\x00"  # results[0].error_message = ""
        b"\x00\x2a"  # results[1].error_code = 42 (INVALID_REQUEST)
        b"\x00\x01x"  # results[1].error_message = "x"
    )
    check_response(30, 1, body, expected)


def test_delete_acls_v3_request_golden() -> None:
    body = DeleteAclsRequest(
        filters=[
            DeleteAclsFilter(
                resource_type_filter=1,
                resource_name_filter=None,
                pattern_type_filter=1,
                principal_filter=None,
                host_filter="*",
                operation=1,
                permission_type=1,
            )
        ]
    )
    expected = (
        b"\x00\x1f"  # request_api_key = 31 (DeleteAcls)
        b"\x00\x03"  # request_api_version = 3 (flexible from v2)
        b"\x00\x00\x00\x07"  # correlation_id = 7
        b"\x00\x03cli"  # client_id = "cli"
        b"\x00"  # header tagged fields: none
        b"\x02"  # filters: compact array of 1
        b"\x01"  # filters[0].resource_type_filter = 1 (ANY)
        b"\x00"  # filters[0].resource_name_filter = null
        b"\x01"  # filters[0].pattern_type_filter = 1 (ANY)
        b"\x00"  # filters[0].principal_filter = null
        b"\x02*"  # filters[0].host_filter = "*"
        b"\x01"  # filters[0].operation = 1 (ANY)
        b"\x01"  # filters[0].permission_type = 1 (ANY)
        b"\x00"  # filters[0] tagged fields: none
        b"\x00"  # body tagged fields: none
    )
    check_request(header(31, 3), body, expected)


def test_delete_acls_v1_response_golden() -> None:
    body = DeleteAclsResponse(
        throttle_time_ms=0,
        filter_results=[
            DeleteAclsFilterResult(
                error_code=0,
                error_message=None,
                matching_acls=[
                    DeleteAclsMatchingAcl(
                        error_code=0,
                        error_message=None,
                        resource_type=2,
                        resource_name="t",
                        pattern_type=3,
                        principal="User:a",
                        host="*",
                        operation=4,
                        permission_type=3,
                    )
                ],
            )
        ],
    )
    expected = (
        b"\x00\x00\x00\x07"  # correlation_id = 7 (response header v0)
        b"\x00\x00\x00\x00"  # throttle_time_ms = 0
        b"\x00\x00\x00\x01"  # filter_results: array of 1
        b"\x00\x00"  # filter_results[0].error_code = 0
        b"\xff\xff"  # filter_results[0].error_message = null
        b"\x00\x00\x00\x01"  # filter_results[0].matching_acls: array of 1
        b"\x00\x00"  # matching_acls[0].error_code = 0
        b"\xff\xff"  # matching_acls[0].error_message = null
        b"\x02"  # matching_acls[0].resource_type = 2 (TOPIC)
        b"\x00\x01t"  # matching_acls[0].resource_name = "t"
        b"\x03"  # matching_acls[0].pattern_type = 3 (LITERAL, v1+)
        b"\x00\x06User:a"  # matching_acls[0].principal = "User:a"
        b"\x00\x01*"  # matching_acls[0].host = "*"
        b"\x04"  # matching_acls[0].operation = 4 (WRITE)
        b"\x03"  # matching_acls[0].permission_type = 3 (ALLOW)
    )
    check_response(31, 1, body, expected)
