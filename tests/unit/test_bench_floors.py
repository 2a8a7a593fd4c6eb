"""The heartbeat floor (bench/floors.py): frames split across reads, each Heartbeat answered byte for byte as our
broker answers a known member's, all the answers of one read in one write, anything else closes."""

from __future__ import annotations

from bench.floors import FloorConnection, floor_members
from protocol import api
from protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from protocol.messages.metadata import MetadataRequest
from protocol.registry import ApiKey
from tests.unit.floor_wire import Transport, frame


def serving() -> tuple[FloorConnection, Transport]:
    connection, transport = FloorConnection(), Transport()
    connection.connection_made(transport)  # type: ignore[arg-type]
    return connection, transport


def test_heartbeats_split_across_reads_are_answered_as_our_broker_answers_them() -> None:
    connection, transport = serving()
    member = floor_members(1, 1)[0]
    request = HeartbeatRequest(group_id=member.group_id, generation_id=1, member_id=member.member_id)
    data = b"".join(frame(ApiKey.HEARTBEAT, 3, request, c) for c in (7, 8, 9))
    connection.data_received(data[:5])
    connection.data_received(data[5:-3])
    connection.data_received(data[-3:])
    expected = [api.encode_response(ApiKey.HEARTBEAT, 3, c, HeartbeatResponse()) for c in (7, 8, 9)]
    assert transport.writes == [expected[0] + expected[1], expected[2]]


def test_api_versions_v0_is_answered_and_anything_else_closes() -> None:
    connection, transport = serving()
    connection.data_received(frame(ApiKey.API_VERSIONS, 0, ApiVersionsRequest(), 1))
    header, body = api.decode_response(ApiKey.API_VERSIONS, 0, transport.writes[0][4:])
    assert header.correlation_id == 1
    assert isinstance(body, ApiVersionsResponse) and body.error_code == 0
    assert {k.api_key for k in body.api_keys} == {ApiKey.API_VERSIONS, ApiKey.HEARTBEAT}
    connection.data_received(frame(ApiKey.METADATA, 1, MetadataRequest(topics=[]), 2))
    assert transport.closed
