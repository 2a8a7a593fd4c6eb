"""`broker.responses.as_written`: JoinGroup's protocol name as Kafka's JoinGroupResponse writes it per version."""

from __future__ import annotations

from broker.responses import as_written
from protocol.errors import ErrorCode
from protocol.messages.heartbeat import HeartbeatResponse
from protocol.messages.join_group import JoinGroupResponse
from protocol.registry import ApiKey


def _name(version: int, protocol_name: str | None) -> str | None:
    body = JoinGroupResponse(error_code=ErrorCode.UNKNOWN_MEMBER_ID, protocol_name=protocol_name)
    written: str | None = as_written(ApiKey.JOIN_GROUP, version, body).protocol_name
    return written


def test_an_empty_protocol_name_is_null_from_v7() -> None:
    assert [_name(v, "") for v in (7, 8, 9)] == [None, None, None]


def test_a_null_protocol_name_is_empty_below_v7() -> None:
    assert [_name(v, None) for v in (0, 5, 6)] == ["", "", ""]


def test_a_chosen_protocol_is_kept() -> None:
    assert [_name(v, "range") for v in (0, 6, 7, 9)] == ["range"] * 4


def test_the_callers_response_is_not_changed() -> None:
    body = JoinGroupResponse(error_code=ErrorCode.UNKNOWN_MEMBER_ID, protocol_name="")
    assert as_written(ApiKey.JOIN_GROUP, 9, body) is not body
    assert body.protocol_name == ""


def test_other_responses_pass_through() -> None:
    body = HeartbeatResponse(error_code=ErrorCode.NONE)
    assert as_written(ApiKey.HEARTBEAT, 4, body) is body
