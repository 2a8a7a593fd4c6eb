"""Coordinator routing and request gating, rules #1-#5 of design/group-protocol.md: FindCoordinator at every
version, the group-id checks each group API makes first, and ApiVersions (its answer and KIP-511's fallback)."""

from __future__ import annotations

from typing import Any

from protocol import api
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.delete_groups import DeleteGroupsRequest
from protocol.messages.describe_groups import DescribeGroupsRequest
from protocol.messages.find_coordinator import FindCoordinatorRequest
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from protocol.messages.offset_commit import OffsetCommitRequest
from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestGroup
from protocol.registry import ApiKey
from tests.differential.registry import scenario
from tests.differential.scenarios.advertised import ADVERTISED
from tests.differential.scenarios.common import join_body, sync_body
from tests.differential.scenarios.raw import KAFKA_API_NAMES, NO_TAGS, header_bytes, sized
from tests.differential.session import Pending, Session

#: Rule #1's keys: two whose Java hash is Integer.MIN_VALUE, one outside the BMP (hashed over its surrogate
#: pair), and the empty one.
HASHING_KEYS = ("polygenelubricants", "GydZG_", "\N{GRINNING FACE}", "")
FIND_COORDINATOR_VERSIONS = range(0, 7)


def _find_coordinator_body(version: int, keys: tuple[str, ...]) -> FindCoordinatorRequest:
    if version >= 4:
        return FindCoordinatorRequest(key_type=0, coordinator_keys=list(keys))
    return FindCoordinatorRequest(key=keys[0], key_type=0)


@scenario("#1")
async def find_coordinator_every_version(s: Session) -> None:
    """FindCoordinator v0-v6 for rule #1's keys, one at a time and (v4+) batched: the node, or the error."""
    conn = await s.connect()
    for version in FIND_COORDINATOR_VERSIONS:
        for key in HASHING_KEYS:
            body = _find_coordinator_body(version, (key,))
            await conn.call(ApiKey.FIND_COORDINATOR, version, body, f"v{version} key {key!r}")
        if version >= 4:
            body = _find_coordinator_body(version, HASHING_KEYS)
            await conn.call(ApiKey.FIND_COORDINATOR, version, body, f"v{version} all keys at once")


def _empty_group_requests() -> list[tuple[ApiKey, int, Any]]:
    """One request per group API with an empty group id, at the newest version both brokers speak."""
    return [
        (ApiKey.JOIN_GROUP, 9, join_body("")),
        (ApiKey.SYNC_GROUP, 5, sync_body("", 1, "someone")),
        (ApiKey.HEARTBEAT, 4, HeartbeatRequest(group_id="", generation_id=1, member_id="someone")),
        (ApiKey.LEAVE_GROUP, 5, LeaveGroupRequest(group_id="", members=[MemberIdentity(member_id="someone")])),
        (ApiKey.OFFSET_COMMIT, 8, OffsetCommitRequest(group_id="", generation_id_or_member_epoch=-1, topics=[])),
        (ApiKey.OFFSET_FETCH, 7, OffsetFetchRequest(group_id="", topics=None)),
        (ApiKey.OFFSET_FETCH, 8, OffsetFetchRequest(groups=[OffsetFetchRequestGroup(group_id="", topics=None)])),
        (ApiKey.DESCRIBE_GROUPS, 5, DescribeGroupsRequest(groups=[""])),
        (ApiKey.DELETE_GROUPS, 2, DeleteGroupsRequest(groups_names=[""])),
    ]


@scenario("#2")
async def empty_group_id_per_api(s: Session) -> None:
    """An empty group id is INVALID_GROUP_ID, except where Kafka accepts the empty string (OffsetCommit,
    OffsetFetch, DescribeGroups, DeleteGroups)."""
    conn = await s.connect()
    for api_key, version, body in _empty_group_requests():
        await conn.call(api_key, version, body, f"{api_key.name} v{version} with group id ''")


def _ranges(response: Any) -> dict[str, str]:
    """The advertised ranges by API name, so each API is one field of the comparison."""
    names = {**KAFKA_API_NAMES, **{int(k): k.name for k in ApiKey}}
    return {names.get(a.api_key, f"API_{a.api_key}"): f"{a.min_version}-{a.max_version}" for a in response.api_keys}


@scenario("#5", known=ADVERTISED)
async def api_versions_answer(s: Session) -> None:
    """ApiVersions v0-v4: the error code and, per API, the advertised range (we serve fewer APIs than Kafka)."""
    conn = await s.connect()
    answers = {}
    for version in range(0, 5):
        body = ApiVersionsRequest(client_software_name="differential", client_software_version="1.0")
        frame = await conn.send(ApiKey.API_VERSIONS, version, body).future
        if frame is None:
            s.note(f"v{version}", {"closed": True})
            return
        answers[version] = api.decode_response(ApiKey.API_VERSIONS, version, frame)[1]
        s.note(f"v{version} error", answers[version].error_code)
    newest = answers[3]
    s.note("every version advertises what v3 does", all(_ranges(a) == _ranges(newest) for a in answers.values()))
    s.note("ranges", _ranges(newest))
    s.note("supported features", {f.name: f"{f.min_version}-{f.max_version}" for f in newest.supported_features})
    s.note("finalized features", {f.name: f.max_version_level for f in newest.finalized_features})


@scenario("#5")
async def api_versions_unsupported_version(s: Session) -> None:
    """KIP-511: an ApiVersions version the broker does not know gets a v0 answer, UNSUPPORTED_VERSION and key 18's
    range, and the connection stays usable."""
    conn = await s.connect()
    body = b"\x0ddifferential\x041.0" + NO_TAGS  # compact strings: the newest versions' shape
    for version in (6, 127):
        correlation_id = conn.next_correlation_id()
        frame = sized(header_bytes(ApiKey.API_VERSIONS, version, correlation_id, flexible=True) + body)
        pending = Pending(ApiKey.API_VERSIONS, 0, conn.send_frame(frame, correlation_id))
        await conn.reply(pending, f"ApiVersions v{version}")
    pending = conn.send(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())
    frame = await pending.future
    answer = None if frame is None else api.decode_response(ApiKey.API_VERSIONS, 0, frame)[1]
    s.note("then ApiVersions v0 on the same connection", None if answer is None else answer.error_code)
