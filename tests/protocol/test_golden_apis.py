"""Golden bytes for the APIs outside the group coordinator: produce/fetch/list-offsets, SASL, topic admin, configs.

Same rules and conventions as test_golden.py (see its docstring): expected bytes assembled by hand from the Kafka
protocol guide and the JSON schemas, correlation_id = 7, client_id = "cli", and both directions checked.
"""

from __future__ import annotations

from protocol.messages.create_partitions import CreatePartitionsRequest, CreatePartitionsTopic
from protocol.messages.create_topics import (
    CreatableTopic,
    CreatableTopicConfig,
    CreatableTopicResult,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from protocol.messages.delete_topics import DeleteTopicsRequest, DeleteTopicState
from protocol.messages.describe_configs import DescribeConfigsRequest, DescribeConfigsResource
from protocol.messages.fetch import (
    FetchableTopicResponse,
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchTopic,
    LeaderIdAndEpoch,
    PartitionData,
)
from protocol.messages.init_producer_id import InitProducerIdRequest, InitProducerIdResponse
from protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
    ListOffsetsTopicResponse,
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
from protocol.messages.sasl_authenticate import SaslAuthenticateRequest, SaslAuthenticateResponse
from protocol.messages.sasl_handshake import SaslHandshakeRequest, SaslHandshakeResponse
from tests.protocol.test_golden import TOPIC_ID, TOPIC_ID_BYTES, check_request, check_response, header

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
