"""One request per advertised (api, version): every version both brokers advertise of every API both serve, with an
ordinary request and the edge inputs that apply (unknown member, illegal generation, fenced instance, unknown
topic, empty group id, oversized metadata, retention in OffsetCommit v2-v4). One generated scenario per API; the
requests are built per API in one table (`APIS`), each entry a function of the fixture and the version.

FindCoordinator and ApiVersions are covered version by version in routing.py; the coordinator rules in depth live
in their own modules. Answers that list the whole broker (ListGroups, Metadata of all topics) are cut down to this
run's names, since other scenarios run at the same time.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from protocol import api
from protocol.errors import ErrorCode
from protocol.messages.create_partitions import (
    CreatePartitionsAssignment,
    CreatePartitionsRequest,
    CreatePartitionsTopic,
)
from protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from protocol.messages.delete_groups import DeleteGroupsRequest
from protocol.messages.delete_topics import DeleteTopicsRequest, DeleteTopicState
from protocol.messages.describe_configs import DescribeConfigsRequest, DescribeConfigsResource
from protocol.messages.describe_groups import DescribeGroupsRequest
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.messages.init_producer_id import InitProducerIdRequest
from protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from protocol.messages.list_groups import ListGroupsRequest
from protocol.messages.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic
from protocol.messages.offset_delete import OffsetDeleteRequest, OffsetDeleteRequestPartition, OffsetDeleteRequestTopic
from protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
)
from protocol.registry import ApiKey, supported_range
from tests.differential.normalize import plain
from tests.differential.registry import Known, scenario
from tests.differential.scenarios.advertised import MISSING, RANGES
from tests.differential.scenarios.common import join_body, one_partition_plan, sync_body
from tests.differential.scenarios.group_state import leaders_serve
from tests.differential.session import Conn, Session
from tests.support.data_plane import batch, fetch_request, produce_request

GHOST = "ghost-member"
INSTANCE = "instance-a"
METADATA_LIMIT = 4096
TOPIC_RESOURCE = 2  # offset.metadata.max.bytes, the default on both


def common_versions(api_key: ApiKey) -> range:
    """The versions of ``api_key`` both brokers advertise: the codec's range where the two agree, else the ranges
    pinned per API in advertised.py (what group-broker serves, within Kafka 4.4's)."""
    lo, hi = supported_range(api_key) or (0, -1)
    ours, kafka, _ = RANGES.get(api_key.name, (f"{lo}-{hi}", f"{lo}-{hi}", ""))
    if MISSING in (ours, kafka):
        return range(0)
    o_lo, o_hi = (int(v) for v in ours.split("-"))
    k_lo, k_hi = (int(v) for v in kafka.split("-"))
    return range(max(o_lo, k_lo), min(o_hi, k_hi) + 1)


@dataclass
class Fixture:
    """What an API's requests refer to: a topic with one record batch and a Stable group whose only member is
    the static member ``INSTANCE`` (so fenced-instance answers can be asked for), all named for this run."""

    s: Session
    conn: Conn
    topic: str = ""
    topic_id: uuid.UUID = field(default_factory=lambda: uuid.UUID(int=0))
    group: str = ""
    member: str = ""
    generation: int = -1

    async def call(self, api_key: ApiKey, version: int, body: Any, what: str) -> Any:
        return await self.conn.call(api_key, version, body, f"v{version} {what}")

    async def ask(self, api_key: ApiKey, version: int, body: Any) -> Any:
        """A setup request whose answer is not part of the comparison (the decoded answer, None if closed)."""
        frame = await self.conn.send(api_key, version, body).future
        return None if frame is None else api.decode_response(api_key, version, frame)[1]

    async def with_topic(self) -> Fixture:
        """A one-partition topic, once this broker's metadata shows its leader (Kafka answers CreateTopics before
        its metadata cache knows the topic)."""
        self.topic = self.s.name("per-version")
        self.topic_id = await make_topic(self, self.topic)
        return self

    async def with_group(self) -> Fixture:
        """A Stable group of one static member (admitted at once; answered after the initial delay)."""
        if not self.topic:
            await self.with_topic()
        self.group = self.s.name("per-version-group")
        body = join_body(self.group, instance_id=INSTANCE, topics=(self.topic,))
        joined = await self.conn.call(ApiKey.JOIN_GROUP, 9, body, "setup: the static member joins")
        self.member, self.generation = self.s.alias("A", joined.member_id), joined.generation_id
        plan = one_partition_plan(self.topic, self.member)
        sync = sync_body(self.group, self.generation, self.member, plan, instance_id=INSTANCE)
        await self.conn.call(ApiKey.SYNC_GROUP, 5, sync, "setup: it syncs")
        return self

    def member_checks(self, version: int, instance_from: int) -> list[tuple[str, str, int, str | None]]:
        """(what, member id, generation, instance id) for the member-check edge inputs this version can carry."""
        checks: list[tuple[str, str, int, str | None]] = [
            ("the member", self.member, self.generation, INSTANCE if version >= instance_from else None),
            ("unknown member", GHOST, self.generation, None),
            ("illegal generation", self.member, self.generation + 7, INSTANCE if version >= instance_from else None),
        ]
        if version >= instance_from:
            checks.append(("fenced instance", GHOST, self.generation, INSTANCE))
        return checks


Requests = Callable[[Fixture, int], Awaitable[None]]
TOPIC_VISIBLE_S = 10.0
RETRY_S = 20.0
LOAD_IN_PROGRESS = 14  # COORDINATOR_LOAD_IN_PROGRESS: retriable


async def make_topic(f: Fixture, name: str, partitions: int = 1) -> uuid.UUID:
    """Create ``name`` and wait until Metadata shows every partition with a leader, and each leader serves
    (`leaders_serve`); its topic id."""
    body = CreateTopicsRequest(
        topics=[CreatableTopic(name=name, num_partitions=partitions, replication_factor=1)], timeout_ms=10_000
    )
    await f.ask(ApiKey.CREATE_TOPICS, 5, body)
    topic = await _until_metadata(
        f,
        name,
        lambda t: t.error_code == 0 and len(t.partitions) == partitions and all(p.leader_id >= 0 for p in t.partitions),
        "is not visible",
    )
    deadline = time.monotonic() + TOPIC_VISIBLE_S
    while not await leaders_serve(f.ask, name, partitions):
        if time.monotonic() > deadline:
            raise TimeoutError(f"topic {name}'s leaders do not serve ListOffsets after {TOPIC_VISIBLE_S} s")
        await asyncio.sleep(0.05)
    return topic.topic_id  # type: ignore[no-any-return]


async def topic_gone(f: Fixture, name: str) -> None:
    """Wait until Metadata no longer knows ``name``: Kafka deletes a topic in the background, and its other APIs
    (an OffsetFetch of all topics by id) follow the same metadata image."""
    await _until_metadata(f, name, lambda t: t.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "is still known")


async def _until_metadata(f: Fixture, name: str, ready: Callable[[Any], bool], failure: str) -> Any:
    """Ask Metadata for ``name`` until its topic entry is ``ready``; that entry."""
    deadline = time.monotonic() + TOPIC_VISIBLE_S
    while True:
        described = await f.ask(ApiKey.METADATA, 12, MetadataRequest(topics=[MetadataRequestTopic(name=name)]))
        topic = described.topics[0] if described is not None and described.topics else None
        if topic is not None and ready(topic):
            return topic
        if time.monotonic() > deadline:
            raise TimeoutError(f"topic {name} {failure} in Metadata after {TOPIC_VISIBLE_S} s")
        await asyncio.sleep(0.05)


# -- the data plane ---------------------------------------------------------------------------------------------


def _by_id(request: Any, topic_id: uuid.UUID) -> Any:
    """The request with its topic named by id too (Produce v13+ sends only the id)."""
    request.topic_data[0].topic_id = topic_id
    return request


async def _produce(f: Fixture, v: int) -> None:
    ghost = uuid.uuid4()
    two = _by_id(produce_request(f.topic, batch(b"one", b"two"), acks=-1), f.topic_id)
    await f.call(ApiKey.PRODUCE, v, two, "a batch of two")
    unknown = _by_id(produce_request(f.s.name("nowhere"), batch(b"x")), ghost)
    await f.call(ApiKey.PRODUCE, v, unknown, "to an unknown topic")
    partition = _by_id(produce_request(f.topic, batch(b"x"), partition=9), f.topic_id)
    await f.call(ApiKey.PRODUCE, v, partition, "to an unknown partition")
    if v >= 13:
        both = _by_id(produce_request(f.topic, batch(b"y")), f.topic_id)
        both.topic_data.insert(0, unknown.topic_data[0])
        await f.call(ApiKey.PRODUCE, v, both, "to an unknown topic id and a known one")


async def _fetch(f: Fixture, v: int) -> None:
    await f.call(ApiKey.FETCH, v, fetch_request(f.topic, 0, topic_id=f.topic_id), "from offset 0")
    await f.call(ApiKey.FETCH, v, fetch_request(f.topic, 1, topic_id=f.topic_id), "from inside the batch")
    await f.call(ApiKey.FETCH, v, fetch_request(f.topic, 99, topic_id=f.topic_id), "past the end")
    unknown = fetch_request(f.s.name("nowhere"), 0, topic_id=uuid.uuid4())
    await f.call(ApiKey.FETCH, v, unknown, "an unknown topic")


def _list_offsets(topic: str, *timestamps: int) -> ListOffsetsRequest:
    partitions = [ListOffsetsPartition(partition_index=0, timestamp=t) for t in timestamps[:1]]
    return ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsTopic(name=topic, partitions=partitions)])


async def _list_offsets_all(f: Fixture, v: int) -> None:
    for what, spec in (("earliest", -2), ("latest", -1), ("by timestamp", 1_700_000_000_000)):
        await f.call(ApiKey.LIST_OFFSETS, v, _list_offsets(f.topic, spec), what)
    if v >= 7:
        await f.call(ApiKey.LIST_OFFSETS, v, _list_offsets(f.topic, -3), "max timestamp")
    await f.call(ApiKey.LIST_OFFSETS, v, _list_offsets(f.s.name("nowhere"), -1), "an unknown topic")


async def _init_producer_id(f: Fixture, v: int) -> None:
    """A producer id for an idempotent producer. A fresh Kafka answers COORDINATOR_LOAD_IN_PROGRESS until its
    controller hands out the first block of ids, and clients retry it; so does this, and records the answer that
    ends the retries (a fact about readiness, not behaviour, is not compared)."""
    body = InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60_000)
    deadline = time.monotonic() + RETRY_S
    response = await f.ask(ApiKey.INIT_PRODUCER_ID, v, body)
    while response is not None and response.error_code == LOAD_IN_PROGRESS and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        response = await f.ask(ApiKey.INIT_PRODUCER_ID, v, body)
    if response is None:
        f.s.note(f"v{v} non-transactional", {"closed": True})
        return
    f.s.note(
        f"v{v} non-transactional",
        {"error_code": response.error_code, "has_id": response.producer_id >= 0, "epoch": response.producer_epoch},
    )


# -- metadata and administration --------------------------------------------------------------------------------


def _mine(s: Session, response: Any) -> Any:
    """A Metadata answer's own topics (this run's), plus the names of the internal ones, sorted."""
    topics = [t for t in response.topics if t.name and s.token in t.name]
    internal = sorted(t.name for t in response.topics if t.is_internal)
    return {
        "brokers": response.brokers,
        "controller_id": response.controller_id,
        "topics": topics,
        "internal": internal,
    }


async def _metadata(f: Fixture, v: int) -> None:
    everything = MetadataRequest(topics=None if v >= 1 else [])
    answer = await f.conn.send(ApiKey.METADATA, v, everything).future
    if answer is not None:
        f.s.note(f"v{v} all topics", _mine(f.s, api.decode_response(ApiKey.METADATA, v, answer)[1]))
    one = MetadataRequest(topics=[MetadataRequestTopic(name=f.topic)], allow_auto_topic_creation=False)
    await f.call(ApiKey.METADATA, v, one, "the topic")
    unknown = MetadataRequest(topics=[MetadataRequestTopic(name=f.s.name("nowhere"))], allow_auto_topic_creation=False)
    await f.call(ApiKey.METADATA, v, unknown, "an unknown topic")
    if v >= 4:
        unknown.allow_auto_topic_creation = True
        await f.call(ApiKey.METADATA, v, unknown, "an unknown topic, auto-creation allowed (disabled on the broker)")


def _configs_in_full(response: Any) -> Any:
    """A CreateTopics answer with each topic's configs as {name: [value, source]}, so each key compares alone."""
    answer = plain(response)
    for topic in answer["topics"]:
        topic["configs"] = {c["name"]: [c["value"], c["config_source"]] for c in topic["configs"]}
    return answer


def _configs_present(response: Any) -> Any:
    """A CreateTopics answer with only whether configs came back (their content is compared once, at v7)."""
    answer = plain(response)
    for topic in answer["topics"]:
        topic["configs"] = bool(topic["configs"])
    return answer


async def _create_topics(f: Fixture, v: int) -> None:
    def body(name: str, partitions: int = 1, replication: int = 1, validate_only: bool = False) -> CreateTopicsRequest:
        topic = CreatableTopic(name=name, num_partitions=partitions, replication_factor=replication)
        return CreateTopicsRequest(topics=[topic], timeout_ms=10_000, validate_only=validate_only)

    name = f.s.name(f"created-v{v}")
    cases = (
        ("a topic", body(name, 2)),
        ("the same topic again", body(name, 2)),
        ("an invalid name", body("bad/name")),
        ("zero partitions", body(f.s.name(f"zero-v{v}"), 0)),
        ("replication factor 3 on one node", body(f.s.name(f"rf3-v{v}"), 1, 3)),
        ("validate only", body(f.s.name(f"dry-v{v}"), validate_only=True)),
    )
    for what, request in cases:
        response = await f.ask(ApiKey.CREATE_TOPICS, v, request)
        shown = _configs_in_full if (v, what) == (7, "a topic") else _configs_present
        f.s.note(f"v{v} {what}", None if response is None else shown(response))


async def _delete_topics(f: Fixture, v: int) -> None:
    name = f.s.name(f"doomed-v{v}")
    await make_topic(f, name)
    if v >= 6:
        body = DeleteTopicsRequest(topics=[DeleteTopicState(name=name)], timeout_ms=10_000)
        unknown = DeleteTopicsRequest(topics=[DeleteTopicState(name=f.s.name("nowhere"))], timeout_ms=10_000)
    else:
        body = DeleteTopicsRequest(topic_names=[name], timeout_ms=10_000)
        unknown = DeleteTopicsRequest(topic_names=[f.s.name("nowhere")], timeout_ms=10_000)
    await f.call(ApiKey.DELETE_TOPICS, v, body, "the topic")
    await f.call(ApiKey.DELETE_TOPICS, v, unknown, "an unknown topic")


async def _create_partitions(f: Fixture, v: int) -> None:
    name = f.s.name(f"grow-v{v}")
    await make_topic(f, name)

    def body(
        topic: str, count: int, assignments: list[CreatePartitionsAssignment] | None = None
    ) -> CreatePartitionsRequest:
        grow = CreatePartitionsTopic(name=topic, count=count, assignments=assignments)
        return CreatePartitionsRequest(topics=[grow], timeout_ms=10_000)

    await f.call(ApiKey.CREATE_PARTITIONS, v, body(name, 3), "to 3 partitions")
    await f.call(ApiKey.CREATE_PARTITIONS, v, body(name, 2), "down to 2")
    await f.call(ApiKey.CREATE_PARTITIONS, v, body(name, 3), "to the count it has")
    await f.call(ApiKey.CREATE_PARTITIONS, v, body(name, 5, []), "to 5 with an empty assignment list")
    await f.call(ApiKey.CREATE_PARTITIONS, v, body(f.s.name("nowhere"), 2), "an unknown topic")


async def _describe_configs(f: Fixture, v: int) -> None:
    def body(name: str, key: str) -> DescribeConfigsRequest:
        wanted = DescribeConfigsResource(resource_type=TOPIC_RESOURCE, resource_name=name, configuration_keys=[key])
        return DescribeConfigsRequest(resources=[wanted])

    for key in ("cleanup.policy", "retention.ms", "max.message.bytes"):
        await f.call(ApiKey.DESCRIBE_CONFIGS, v, body(f.topic, key), f"the topic's {key}")
    await f.call(ApiKey.DESCRIBE_CONFIGS, v, body(f.s.name("nowhere"), "retention.ms"), "an unknown topic")


# -- groups ------------------------------------------------------------------------------------------------------


async def _join_group(f: Fixture, v: int) -> None:
    group = f.s.name(f"join-v{v}")
    body = join_body(group, topics=(f.topic,))
    joined = await f.call(ApiKey.JOIN_GROUP, v, body, "a new member")
    f.s.alias(f"J{v}", joined.member_id)
    await f.call(ApiKey.JOIN_GROUP, v, join_body(f.s.name("nogroup"), GHOST), "unknown member, unknown group")
    await f.call(ApiKey.JOIN_GROUP, v, join_body(f.group, GHOST, topics=(f.topic,)), "unknown member")
    await f.call(ApiKey.JOIN_GROUP, v, join_body(""), "empty group id")


async def _sync_group(f: Fixture, v: int) -> None:
    for what, member, generation, instance in f.member_checks(v, instance_from=3):
        body = sync_body(f.group, generation, member, instance_id=instance)
        await f.call(ApiKey.SYNC_GROUP, v, body, what)
    await f.call(ApiKey.SYNC_GROUP, v, sync_body(f.s.name("nogroup"), 1, GHOST), "unknown group")


async def _heartbeat(f: Fixture, v: int) -> None:
    for what, member, generation, instance in f.member_checks(v, instance_from=3):
        body = HeartbeatRequest(
            group_id=f.group, generation_id=generation, member_id=member, group_instance_id=instance
        )
        await f.call(ApiKey.HEARTBEAT, v, body, what)
    await f.call(ApiKey.HEARTBEAT, v, HeartbeatRequest(group_id="", generation_id=1, member_id=GHOST), "empty group id")


async def _leave_group(f: Fixture, v: int) -> None:
    if v >= 3:
        ghosts = [MemberIdentity(member_id=GHOST), MemberIdentity(member_id=GHOST, group_instance_id=INSTANCE)]
        await f.call(
            ApiKey.LEAVE_GROUP,
            v,
            LeaveGroupRequest(group_id=f.group, members=ghosts),
            "unknown member, fenced instance",
        )
        await f.call(
            ApiKey.LEAVE_GROUP, v, LeaveGroupRequest(group_id=f.s.name("nogroup"), members=ghosts[:1]), "unknown group"
        )
    else:
        await f.call(ApiKey.LEAVE_GROUP, v, LeaveGroupRequest(group_id=f.group, member_id=GHOST), "unknown member")
        await f.call(
            ApiKey.LEAVE_GROUP, v, LeaveGroupRequest(group_id=f.s.name("nogroup"), member_id=GHOST), "unknown group"
        )


def _commit(f: Fixture, member: str, generation: int, instance: str | None, **kw: Any) -> OffsetCommitRequest:
    partition = OffsetCommitRequestPartition(
        partition_index=kw.pop("partition", 0),
        committed_offset=kw.pop("offset", 1),
        committed_metadata=kw.pop("metadata", "m"),
    )
    name = kw.pop("topic", f.topic)
    topic_id = kw.pop("topic_id", f.topic_id if name == f.topic else uuid.uuid5(uuid.NAMESPACE_OID, name))
    topic = OffsetCommitRequestTopic(name=name, topic_id=topic_id, partitions=[partition])
    return OffsetCommitRequest(
        group_id=kw.pop("group", f.group),
        generation_id_or_member_epoch=generation,
        member_id=member,
        group_instance_id=instance,
        topics=[topic],
        **kw,
    )


async def _offset_commit(f: Fixture, v: int) -> None:
    for what, member, generation, instance in f.member_checks(v, instance_from=7):
        await f.call(ApiKey.OFFSET_COMMIT, v, _commit(f, member, generation, instance, offset=v), what)
    simple = f.s.name(f"simple-v{v}")
    await f.call(ApiKey.OFFSET_COMMIT, v, _commit(f, "", -1, None, group=simple), "a simple group")
    await f.call(
        ApiKey.OFFSET_COMMIT, v, _commit(f, "", -1, None, group=simple, topic=f.s.name("nowhere")), "unknown topic"
    )
    await f.call(ApiKey.OFFSET_COMMIT, v, _commit(f, "", -1, None, group=simple, partition=5), "unknown partition")
    too_long = "x" * (METADATA_LIMIT + 1)
    await f.call(
        ApiKey.OFFSET_COMMIT, v, _commit(f, "", -1, None, group=simple, metadata=too_long), "oversized metadata"
    )
    # With a generation, so that no group "" is created: other scenarios ask about that group too.
    await f.call(ApiKey.OFFSET_COMMIT, v, _commit(f, GHOST, 3, None, group=""), "empty group id")
    await f.call(
        ApiKey.OFFSET_COMMIT, v, _commit(f, "", 3, None, group=f.s.name("nogroup")), "generation 3, unknown group"
    )
    if v >= 10:
        both = _commit(f, "", -1, None, group=simple)
        both.topics.insert(0, _commit(f, "", -1, None, topic=f.s.name("nowhere")).topics[0])
        await f.call(ApiKey.OFFSET_COMMIT, v, both, "an unknown topic id before a known one")
        unknown_in_nogroup = _commit(f, GHOST, 3, None, group=f.s.name("nogroup"), topic=f.s.name("nowhere"))
        await f.call(ApiKey.OFFSET_COMMIT, v, unknown_in_nogroup, "only an unknown topic id, unknown group")
    if v <= 4:
        kept = _commit(f, "", -1, None, group=simple, retention_time_ms=60_000, offset=42)
        await f.call(ApiKey.OFFSET_COMMIT, v, kept, "with a retention time")
        fetch = OffsetFetchRequest(
            group_id=simple, topics=[OffsetFetchRequestTopic(name=f.topic, partition_indexes=[0])]
        )
        await f.call(ApiKey.OFFSET_FETCH, 1, fetch, "the commit with a retention time, fetched")


def _fetch_offsets(v: int, group: str, topic: str | None, topic_id: uuid.UUID | None = None) -> OffsetFetchRequest:
    """v10 names the topic by id: ``topic_id`` (a random one, unknown to the broker, when not given)."""
    if v >= 8:
        by_id = topic_id or uuid.uuid4()
        topics = (
            None if topic is None else [OffsetFetchRequestTopics(name=topic, topic_id=by_id, partition_indexes=[0, 7])]
        )
        return OffsetFetchRequest(groups=[OffsetFetchRequestGroup(group_id=group, topics=topics)])
    wanted = None if topic is None else [OffsetFetchRequestTopic(name=topic, partition_indexes=[0, 7])]
    return OffsetFetchRequest(group_id=group, topics=wanted)


async def _offset_fetch(f: Fixture, v: int) -> None:
    await f.call(ApiKey.OFFSET_COMMIT, 8, _commit(f, f.member, f.generation, INSTANCE, offset=5), "setup: a commit")
    mine = f.topic_id
    await f.call(ApiKey.OFFSET_FETCH, v, _fetch_offsets(v, f.group, f.topic, mine), "the group's commit")
    await f.call(ApiKey.OFFSET_FETCH, v, _fetch_offsets(v, f.group, f.s.name("nowhere")), "an unknown topic")
    await f.call(ApiKey.OFFSET_FETCH, v, _fetch_offsets(v, f.s.name("nogroup"), f.topic, mine), "an unknown group")
    await f.call(ApiKey.OFFSET_FETCH, v, _fetch_offsets(v, "", f.topic, mine), "empty group id")
    if v >= 2:
        await f.call(ApiKey.OFFSET_FETCH, v, _fetch_offsets(v, f.group, None), "all topics")
    if v >= 10:
        both = _fetch_offsets(v, f.group, f.s.name("nowhere"))
        both.groups[0].topics.extend(_fetch_offsets(v, f.group, f.topic, f.topic_id).groups[0].topics)  # type: ignore[union-attr]
        await f.call(ApiKey.OFFSET_FETCH, v, both, "an unknown topic id before a known one")
        both.groups[0].group_id = ""
        await f.call(ApiKey.OFFSET_FETCH, v, both, "an unknown topic id and a known one, empty group id")
        both.groups[0].group_id = f.s.name("nogroup")
        await f.call(ApiKey.OFFSET_FETCH, v, both, "an unknown topic id and a known one, unknown group")
        doomed = f.s.name("fetch-deleted")
        await make_topic(f, doomed)
        group = f.s.name("fetch-deleted-group")
        await f.call(ApiKey.OFFSET_COMMIT, 9, _commit(f, "", -1, None, group=group, topic=doomed), "setup: commit")
        await f.call(ApiKey.OFFSET_COMMIT, 9, _commit(f, "", -1, None, group=group), "setup: commit another topic")
        deleted = await f.ask(
            ApiKey.DELETE_TOPICS, 6, DeleteTopicsRequest(topics=[DeleteTopicState(name=doomed)], timeout_ms=10_000)
        )
        f.s.note("setup: delete the topic", deleted is not None and deleted.responses[0].error_code)
        await topic_gone(f, doomed)
        await f.call(ApiKey.OFFSET_FETCH, v, _fetch_offsets(v, group, None), "all topics, one of them deleted")


async def _describe_groups(f: Fixture, v: int) -> None:
    for what, group in (("the group", f.group), ("an unknown group", f.s.name("nogroup")), ("empty group id", "")):
        body = DescribeGroupsRequest(groups=[group], include_authorized_operations=False)
        await f.call(ApiKey.DESCRIBE_GROUPS, v, body, what)


async def _list_groups(f: Fixture, v: int) -> None:
    filters: list[tuple[str, ListGroupsRequest]] = [("all", ListGroupsRequest())]
    if v >= 4:
        filters.append(("Stable ones", ListGroupsRequest(states_filter=["Stable"])))
        filters.append(("Empty ones", ListGroupsRequest(states_filter=["Empty"])))
    if v >= 5:
        filters.append(("classic ones", ListGroupsRequest(types_filter=["classic"])))
        filters.append(("consumer ones", ListGroupsRequest(types_filter=["consumer"])))
    for what, body in filters:
        answer = await f.conn.send(ApiKey.LIST_GROUPS, v, body).future
        if answer is None:
            f.s.note(f"v{v} {what}", {"closed": True})
            continue
        response = api.decode_response(ApiKey.LIST_GROUPS, v, answer)[1]
        mine = sorted((g for g in response.groups if f.s.token in g.group_id), key=lambda g: g.group_id)
        f.s.note(f"v{v} {what}", {"error_code": response.error_code, "groups": mine})


async def _delete_groups(f: Fixture, v: int) -> None:
    simple = f.s.name(f"deletable-v{v}")
    await f.call(ApiKey.OFFSET_COMMIT, 8, _commit(f, "", -1, None, group=simple), "setup: a simple group")
    for what, group in (
        ("an empty group", simple),
        ("a live group", f.group),
        ("an unknown group", f.s.name("nogroup")),
        ("empty group id", ""),
    ):
        await f.call(ApiKey.DELETE_GROUPS, v, DeleteGroupsRequest(groups_names=[group]), what)


async def _offset_delete(f: Fixture, v: int) -> None:
    simple = f.s.name("offset-delete")
    await f.call(ApiKey.OFFSET_COMMIT, 8, _commit(f, "", -1, None, group=simple), "setup: a simple group")

    def body(group: str, topic: str) -> OffsetDeleteRequest:
        partitions = [OffsetDeleteRequestPartition(partition_index=0)]
        return OffsetDeleteRequest(group_id=group, topics=[OffsetDeleteRequestTopic(name=topic, partitions=partitions)])

    await f.call(ApiKey.OFFSET_DELETE, v, body(simple, f.topic), "the simple group's offsets")
    await f.call(ApiKey.OFFSET_DELETE, v, body(f.group, f.topic), "a subscribed topic of a live group")
    await f.call(ApiKey.OFFSET_DELETE, v, body(f.s.name("nogroup"), f.topic), "an unknown group")
    await f.call(ApiKey.OFFSET_DELETE, v, body(simple, f.s.name("nowhere")), "an unknown topic")


@dataclass(frozen=True, slots=True)
class ApiCase:
    """An API's requests for one version, and what the fixture must hold first."""

    requests: Requests
    needs_group: bool = False
    known: tuple[Known, ...] = ()


#: Every API both brokers serve (FindCoordinator and ApiVersions: routing.py), in key order.
APIS: dict[ApiKey, ApiCase] = {
    ApiKey.PRODUCE: ApiCase(_produce),
    ApiKey.FETCH: ApiCase(_fetch),
    ApiKey.LIST_OFFSETS: ApiCase(_list_offsets_all),
    ApiKey.METADATA: ApiCase(_metadata),
    ApiKey.OFFSET_COMMIT: ApiCase(_offset_commit, needs_group=True),
    ApiKey.OFFSET_FETCH: ApiCase(_offset_fetch, needs_group=True),
    ApiKey.JOIN_GROUP: ApiCase(_join_group, needs_group=True),
    ApiKey.HEARTBEAT: ApiCase(_heartbeat, needs_group=True),
    ApiKey.LEAVE_GROUP: ApiCase(_leave_group, needs_group=True),
    ApiKey.SYNC_GROUP: ApiCase(_sync_group, needs_group=True),
    ApiKey.DESCRIBE_GROUPS: ApiCase(_describe_groups, needs_group=True),
    ApiKey.LIST_GROUPS: ApiCase(_list_groups, needs_group=True),
    ApiKey.CREATE_TOPICS: ApiCase(_create_topics),
    ApiKey.DELETE_TOPICS: ApiCase(_delete_topics),
    ApiKey.INIT_PRODUCER_ID: ApiCase(_init_producer_id),
    ApiKey.DESCRIBE_CONFIGS: ApiCase(_describe_configs),
    ApiKey.CREATE_PARTITIONS: ApiCase(_create_partitions),
    ApiKey.DELETE_GROUPS: ApiCase(_delete_groups, needs_group=True),
    ApiKey.OFFSET_DELETE: ApiCase(_offset_delete, needs_group=True),
}


def _register(api_key: ApiKey, case: ApiCase) -> None:
    versions = common_versions(api_key)

    async def every_version(s: Session) -> None:
        fixture = Fixture(s, await s.connect())
        await (fixture.with_group() if case.needs_group else fixture.with_topic())
        if api_key == ApiKey.FETCH:
            await fixture.call(
                ApiKey.PRODUCE, 9, produce_request(fixture.topic, batch(b"one", b"two")), "setup: a batch"
            )
        for version in versions:
            await case.requests(fixture, version)

    every_version.__name__ = f"every_version_{api_key.name.lower()}"
    every_version.__doc__ = f"{api_key.name} v{versions.start}-v{versions.stop - 1}: ordinary and edge inputs."
    scenario(f"{api_key.name} v{versions.start}-{versions.stop - 1}", known=case.known)(every_version)


for _key, _case in APIS.items():
    _register(_key, _case)
