"""KIP-848 consumer groups (issue #14): ConsumerGroupHeartbeat's validation, member epochs and the incremental
assignment (a partition is handed over only once its previous owner has released it), ConsumerGroupDescribe,
ListGroups' type and state, leaving, static members, the server assignors, regex subscriptions, partitions added,
and the session timeout (on brokers of its own, with a short `group.consumer.session.timeout.ms`).

Members are driven by hand, one heartbeat per step, as a client would: a member reports the partitions it owns
(the last assignment it got) in every heartbeat, which is how it acknowledges a revocation. Version 1 members bring
their own member id (KIP-1082), fixed per name so the assignors' member order is the same on both brokers and on
every run; version 0 members get theirs from the coordinator. Topic ids differ between brokers: each topic's id is
named after the topic (``s.alias``), and assignments are recorded with their topics sorted by that name.
Offsets and admin requests against consumer groups are in consumer_group_offsets.py.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from protocol.messages.consumer_group_describe import ConsumerGroupDescribeRequest
from protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest, TopicPartitions
from protocol.messages.create_partitions import CreatePartitionsRequest, CreatePartitionsTopic
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from protocol.registry import ApiKey
from tests.differential.normalize import plain
from tests.differential.registry import scenario
from tests.differential.scenarios.admin import _list
from tests.differential.scenarios.group_state import _partitions_known, ask, make_topic
from tests.differential.session import Conn, Session
from tests.reference.settings import CONSUMER_SESSION_SETTINGS

HEARTBEAT_V = 1
REBALANCE_MS = 10_000
POLL_MS = 300
#: Kafka's group coordinator learns of a new topic from its own metadata image, a moment after Metadata answers
#: with it: a member joining at once may be assigned without it, and get it one epoch later.
TOPIC_MARGIN_MS = 500
LEAVE, STATIC_LEAVE = -1, -2


def _canonical(s: Session, value: Any) -> Any:
    """Plain data with topics (by the name their id was given), partitions and topic names sorted: neither broker
    promises the order of an assignment's topics or of a subscription, and the real ids sort differently on each."""
    if isinstance(value, dict):
        return {k: _canonical(s, v) for k, v in value.items()}
    if isinstance(value, list):
        items = [_canonical(s, v) for v in value]
        if items and all(isinstance(v, dict) and "topic_id" in v for v in items):
            return sorted(items, key=lambda v: s.aliases.get(v["topic_id"], v["topic_id"]))
        if items and (all(isinstance(v, int) for v in items) or all(isinstance(v, str) for v in items)):
            return sorted(items)  # partitions, subscribed topic names: sets to both brokers
        return items
    return value


async def record(s: Session, conn: Conn, api_key: int, version: int, body: Any, step: str) -> Any:
    """A request whose answer is recorded canonically (`_canonical`); the decoded answer, None if closed."""
    response = await ask(conn, api_key, version, body)
    s.note(step, {"closed": True} if response is None else _canonical(s, plain(response)))
    return response


async def topic(s: Session, conn: Conn, base: str, partitions: int) -> tuple[str, uuid.UUID]:
    """Create a topic and name its id after ``base`` in the transcript; its name and id."""
    name = s.name(base)
    await make_topic(s, conn, name, partitions)
    probe = MetadataRequest(topics=[MetadataRequestTopic(name=name)], allow_auto_topic_creation=False)
    answer = await ask(conn, ApiKey.METADATA, 12, probe)
    topic_id = answer.topics[0].topic_id if answer is not None and answer.topics else uuid.UUID(int=0)
    s.alias(f"{base}-id", str(topic_id))
    await s.sleep_ms(TOPIC_MARGIN_MS)
    return name, topic_id


async def add_partitions(s: Session, conn: Conn, name: str, count: int, step: str) -> None:
    body = CreatePartitionsRequest(
        topics=[CreatePartitionsTopic(name=name, count=count, assignments=None)], timeout_ms=10_000
    )
    await conn.call(ApiKey.CREATE_PARTITIONS, 3, body, step)
    s.note(f"{step}: partitions known", await _partitions_known(conn, name, count))


async def cg_describe(s: Session, conn: Conn, groups: list[str], step: str) -> Any:
    body = ConsumerGroupDescribeRequest(group_ids=groups, include_authorized_operations=False)
    return await record(s, conn, ApiKey.CONSUMER_GROUP_DESCRIBE, 0, body, step)


def fixed_member_id(name: str) -> str:
    """A v1 member's own id: the same for a name on every run, so the assignors order members alike."""
    return f"{name}-{uuid.uuid5(uuid.NAMESPACE_URL, f'group-broker/differential/{name}')}"


JOIN_FIELDS = ("error_code", "error_message", "member_id", "heartbeat_interval_ms")


@dataclass(slots=True)
class Member:
    """One consumer-protocol member: its id, its epoch and the partitions it owns (its last assignment)."""

    s: Session
    conn: Conn
    group: str
    name: str
    version: int = HEARTBEAT_V
    member_id: str = ""
    epoch: int = 0
    owned: list[TopicPartitions] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.version >= 1:
            self.member_id = self.s.alias(self.name, fixed_member_id(self.name))

    async def send(self, body: ConsumerGroupHeartbeatRequest, step: str | None, only: tuple[str, ...] = ()) -> Any:
        """Send a heartbeat and take in what the answer changes; record it under ``step`` (unless None), only the
        fields ``only`` names if any."""
        response = await ask(self.conn, ApiKey.CONSUMER_GROUP_HEARTBEAT, self.version, body)
        if step is not None:
            outcome = {"closed": True} if response is None else _canonical(self.s, plain(response))
            if only and response is not None:
                outcome = {k: v for k, v in outcome.items() if k in only}
            self.s.note(step, outcome)
        if response is not None and response.error_code == 0:
            if response.member_id:
                self.member_id = self.s.alias(self.name, response.member_id)
            self.epoch = response.member_epoch
            if response.assignment is not None:
                self.owned = response.assignment.topic_partitions
        return response

    def body(self, epoch: int, **fields: Any) -> ConsumerGroupHeartbeatRequest:
        return ConsumerGroupHeartbeatRequest(
            group_id=self.group, member_id=self.member_id, member_epoch=epoch, **fields
        )

    async def join(
        self,
        step: str,
        topics: list[str] | None = None,
        *,
        regex: str | None = None,
        assignor: str | None = None,
        instance_id: str | None = None,
        whole: bool = False,
    ) -> Any:
        """Epoch 0 with everything a first heartbeat carries. Unless ``whole``, only the error, member id and
        heartbeat interval are recorded: whether the first answer already carries the new target assignment is
        timing in Kafka 4.3+ (group.consumer.assignment.interval.ms, assignor offload); `settle` records where the
        member ends up."""
        self.owned = []
        body = self.body(
            0,
            instance_id=instance_id,
            rebalance_timeout_ms=REBALANCE_MS,
            subscribed_topic_names=topics if topics is not None or regex is not None else [],
            subscribed_topic_regex=regex,
            server_assignor=assignor,
            topic_partitions=[],
        )
        return await self.send(body, step, () if whole else JOIN_FIELDS)

    async def beat(self, step: str | None, only: tuple[str, ...] = (), **fields: Any) -> Any:
        """A heartbeat at the member's epoch reporting the partitions it owns (acknowledging any revocation)."""
        return await self.send(self.body(self.epoch, topic_partitions=self.owned, **fields), step, only)

    async def leave(self, step: str, epoch: int = LEAVE, instance_id: str | None = None) -> Any:
        return await self.send(self.body(epoch, instance_id=instance_id), step)

    def partitions(self) -> int:
        return sum(len(tp.partitions) for tp in self.owned)

    def _where(self, step: str, **facts: Any) -> None:
        self.s.note(step, {**facts, "member_epoch": self.epoch, "owned": _canonical(self.s, plain(self.owned))})

    async def poll(self, step: str, done: Callable[[Member], bool], window_s: float) -> None:
        """Heartbeat every POLL_MS until ``done`` (or the window ends); record only whether it happened and where
        the member ended up, since how many heartbeats it took is timing."""
        deadline = time.monotonic() + window_s
        reached = done(self)
        while not reached and time.monotonic() < deadline:
            await self.s.sleep_ms(POLL_MS)
            response = await self.beat(None)
            if response is None or response.error_code != 0:
                break
            reached = done(self)
        self._where(step, reached=reached)

    async def settle(self, step: str, window_s: float = 6.0) -> None:
        """Heartbeat (unrecorded) until the group's target assignment has caught up with the group epoch and this
        member with the target's epoch: Kafka 4.3+ computes a new target at most every
        group.consumer.assignment.interval.ms (1 s), on a heartbeat, possibly in the background. Records where the
        member ended up. Only for a member with nothing to revoke (its epoch would wait for the revocation)."""
        deadline = time.monotonic() + window_s
        body = ConsumerGroupDescribeRequest(group_ids=[self.group])
        settled = False
        while True:
            described = await ask(self.conn, ApiKey.CONSUMER_GROUP_DESCRIBE, 0, body)
            group = described.groups[0] if described is not None and described.groups else None
            if group is not None and group.error_code == 0 and group.assignment_epoch == group.group_epoch:
                settled = self.epoch == group.assignment_epoch
            if settled or time.monotonic() > deadline:
                break
            await self.s.sleep_ms(POLL_MS)
            response = await self.beat(None)
            if response is None or response.error_code != 0:
                break
        self._where(step, settled=settled)


async def first_of_two(s: Session, base: str, partitions: int) -> tuple[Member, Member, str]:
    """Members A and B (own connections) of group ``base`` on one topic: A has joined and owns every partition,
    B has not joined yet. Returns both and the topic's name."""
    a_conn, b_conn = await s.connect("client-a"), await s.connect("client-b")
    group = s.name(base)
    name, _ = await topic(s, a_conn, f"{base}-t", partitions)
    a, b = Member(s, a_conn, group, "A"), Member(s, b_conn, group, "B")
    await a.join("A joins", [name])
    await a.settle("A owns every partition")
    return a, b, name


def has(count: int) -> Callable[[Member], bool]:
    return lambda m: m.partitions() == count


@scenario("#14 heartbeat validation")
async def consumer_heartbeat_join_validation(s: Session) -> None:
    """Bad first heartbeats are INVALID_REQUEST (with Kafka's message) or UNSUPPORTED_ASSIGNOR /
    INVALID_REGULAR_EXPRESSION; an unknown member is UNKNOWN_MEMBER_ID, a wrong epoch FENCED_MEMBER_EPOCH."""
    conn = await s.connect("client-v")
    group = s.name("cg-valid")
    name, topic_id = await topic(s, conn, "cg-valid-t", 2)
    m = Member(s, conn, group, "A")
    good: dict[str, Any] = {
        "rebalance_timeout_ms": REBALANCE_MS,
        "subscribed_topic_names": [name],
        "topic_partitions": [],
    }
    cases: list[tuple[str, int, dict[str, Any]]] = [
        ("v0 no rebalance timeout", 0, {**good, "rebalance_timeout_ms": -1}),
        ("v0 no subscription", 0, {**good, "subscribed_topic_names": None}),
        ("v0 owned partitions", 0, {**good, "topic_partitions": [TopicPartitions(topic_id=topic_id, partitions=[0])]}),
        ("v0 unknown assignor", 0, {**good, "server_assignor": "nope"}),
        ("v1 invalid regex", 1, {**good, "subscribed_topic_names": None, "subscribed_topic_regex": "[a-"}),
        ("v1 empty member id", 1, {**good, "member_id": ""}),
        ("v0 empty group id", 0, {**good, "group_id": ""}),
        ("v1 epoch -3", 1, {"member_epoch": -3}),
    ]
    for step, version, fields in cases:
        body = m.body(0)
        for key, value in fields.items():
            setattr(body, key, value)
        await record(s, conn, ApiKey.CONSUMER_GROUP_HEARTBEAT, version, body, step)
    ghost = Member(s, conn, s.name("cg-valid-missing"), "ghost")
    await ghost.send(ghost.body(3, topic_partitions=[]), "unknown member, epoch 3, missing group")
    both = Member(s, conn, s.name("cg-valid-both"), "both")
    await both.join("v1 names and a regex", [name], regex="x.*")
    await m.join("A joins", [name])
    await m.settle("A settles")
    await m.beat("A heartbeats")
    stranger = Member(s, conn, group, "stranger")
    await stranger.send(stranger.body(1, topic_partitions=[]), "unknown member, epoch 1")
    await m.send(m.body(m.epoch + 7, topic_partitions=m.owned), "A with a wrong epoch")
    await m.beat("A again at its epoch")
    await m.join("A rejoins at epoch 0", [name], whole=True)
    await m.leave("A leaves")
    await m.leave("A leaves again")


@scenario("#14 join")
async def consumer_first_member_joins(s: Session) -> None:
    """A v0 member joins a two-topic subscription: the coordinator names it, hands out the heartbeat interval and,
    once the target is computed, every partition; ConsumerGroupDescribe shows the group epoch, assignment epoch,
    assignor and member. A subscription change and the member's leave bump the group epoch."""
    conn = await s.connect("client-a")
    group = s.name("cg-first")
    one, _ = await topic(s, conn, "cg-first-1", 3)
    two, _ = await topic(s, conn, "cg-first-2", 2)
    a = Member(s, conn, group, "A", version=0)
    await a.join("A joins (v0)", [one, two])
    await a.settle("A settles")
    await a.beat("A heartbeats")
    await cg_describe(s, conn, [group], "described")
    await cg_describe(s, conn, [s.name("cg-first-missing")], "a missing group described")
    await a.beat("A drops a topic: its partitions are taken at once", subscribed_topic_names=[one])
    await a.settle("A at the next epoch")
    await cg_describe(s, conn, [group], "described after the change")
    await a.leave("A leaves")
    await cg_describe(s, conn, [group], "described after A left")


async def _state(s: Session, conn: Conn, group: str, step: str) -> None:
    """The group's type and state as ListGroups v5 shows them, filtered by type and by state."""
    mine = {group}
    await _list(s, conn, 5, f"{step}: consumer groups", mine, types=("consumer",))
    await _list(s, conn, 5, f"{step}: classic groups", mine, types=("classic",))
    await _list(s, conn, 5, f"{step}: Reconciling", mine, states=("Reconciling",))
    await _list(s, conn, 5, f"{step}: Stable consumer", mine, states=("Stable",), types=("consumer",))


@scenario("#14 revocation")
async def consumer_second_member_revocation(s: Session) -> None:
    """B joins A's group: once the new target exists B gets only what nobody owns (nothing), A is told to revoke
    on its next heartbeat and keeps its epoch until it reports the partitions released; then B gets them and both
    are Stable at the new epoch. ListGroups and ConsumerGroupDescribe show Reconciling, then Stable."""
    a, b, name = await first_of_two(s, "cg-revoke", 4)
    a_conn, group = a.conn, a.group
    await _state(s, a_conn, group, "one member")
    await b.join("B joins", [name])
    await b.settle("B is at the new epoch with what nobody owns")
    await cg_describe(s, a_conn, [group], "described while A has to revoke")
    await _state(s, a_conn, group, "while A has to revoke")
    await b.beat("B before A released")
    await a.beat("A is told to revoke")
    await b.beat("B still waits")
    await a.beat("A reports the partitions released")
    await b.beat("B gets the released partitions")
    await b.beat("B reports them")
    await a.beat("A at the new epoch")
    await cg_describe(s, a_conn, [group], "described when both reconciled")
    await _state(s, a_conn, group, "both reconciled")
    await a.leave("A leaves")
    await b.poll("B gets A's partitions", has(4), 5.0)
    await cg_describe(s, a_conn, [group], "described after A left")


@scenario("#14 static members")
async def consumer_static_member(s: Session) -> None:
    """Leaving with -1 ends a dynamic member. A static member leaving with -2 keeps its place: a new member id with
    the same instance id takes over its epoch and assignment; the old id is fenced; a live instance id cannot be
    claimed (UNRELEASED_INSTANCE_ID)."""
    conn, other = await s.connect("client-s"), await s.connect("client-x")
    group = s.name("cg-static")
    name, _ = await topic(s, conn, "cg-static-t", 2)
    d = Member(s, conn, group, "D")
    await d.join("dynamic D joins", [name])
    await d.leave("D leaves with -1")
    await d.beat("D heartbeats after leaving")
    st = Member(s, conn, group, "S")
    await st.join("static S joins", [name], instance_id="inst-s")
    await st.settle("S settles")
    await st.beat("S heartbeats")
    x = Member(s, other, group, "X")
    await x.join("X claims inst-s while S is live", [name], instance_id="inst-s")
    await st.leave("S leaves with -2", STATIC_LEAVE, instance_id="inst-s")
    await cg_describe(s, conn, [group], "described after S left with -2")
    s2 = Member(s, other, group, "S2")
    await s2.join("S2 rejoins as inst-s", [name], instance_id="inst-s", whole=True)
    await cg_describe(s, conn, [group], "described after S2 took over")
    await st.send(st.body(st.epoch, instance_id="inst-s", topic_partitions=st.owned), "old S heartbeats")
    await st.send(st.body(st.epoch, topic_partitions=st.owned), "old S heartbeats without its instance id")
    await s2.beat("S2 heartbeats")
    await s2.leave("S2 leaves with -1", LEAVE, instance_id="inst-s")
    await cg_describe(s, conn, [group], "described after S2 left with -1")


async def _spread(s: Session, conn: Conn, group: str, step: str) -> None:
    """The assignor and how many partitions each member's target has: which topic the uniform assignor gives whom
    follows the topic ids' order, random on each broker, so only the counts are compared."""
    described = await ask(conn, ApiKey.CONSUMER_GROUP_DESCRIBE, 0, ConsumerGroupDescribeRequest(group_ids=[group]))
    if described is None or not described.groups:
        s.note(step, {"closed": True})
        return
    g = described.groups[0]
    counts = [
        {"member_id": m.member_id, "target": sum(len(tp.partitions) for tp in m.target_assignment.topic_partitions)}
        for m in g.members
    ]
    s.note(
        step,
        {
            "error_code": g.error_code,
            "assignor_name": g.assignor_name,
            "group_epoch": g.group_epoch,
            "assignment_epoch": g.assignment_epoch,
            "members": counts,
        },
    )


@scenario("#14 assignors")
async def consumer_server_assignors(s: Session) -> None:
    """ServerAssignor picks the group's assignor: `range` splits each topic into contiguous ranges (4 and 2 of two
    3-partition topics), `uniform` (the default, first of group.consumer.assignors) spreads them 3 and 3; members
    asking for different ones get the group's choice; an unknown one is refused."""
    conn = await s.connect("client-r")
    one, _ = await topic(s, conn, "cg-assign-1", 3)
    two, _ = await topic(s, conn, "cg-assign-2", 3)
    for assignor in ("range", "uniform", None, "mixed"):
        label = assignor or "default"
        group = s.name(f"cg-assign-{label}")
        a, b = Member(s, conn, group, f"{label}-A"), Member(s, conn, group, f"{label}-B")
        await a.join(f"{label}: A joins", [one, two], assignor="range" if assignor == "mixed" else assignor)
        await a.settle(f"{label}: A settles")
        await b.join(f"{label}: B joins", [one, two], assignor="uniform" if assignor == "mixed" else assignor)
        await b.settle(f"{label}: B settles")
        if assignor == "range":
            await cg_describe(s, conn, [group], f"{label}: target assignment")
        else:
            await _spread(s, conn, group, f"{label}: target assignment")
    await b.join("B asks for an unknown assignor", [one, two], assignor="sticky")


@scenario("#14 regex")
async def consumer_regex_subscription(s: Session) -> None:
    """A v1 regex subscription (RE2) is resolved by the coordinator: matching topics are assigned, others not; a
    matching topic created later is assigned within a bounded wait (Kafka resolves a group's regexes at most every
    10 s, so the wait covers that)."""
    conn = await s.connect("client-rx")
    group = s.name("cg-regex")
    await topic(s, conn, "cg-rx-a1", 2)
    await topic(s, conn, "cg-rx-b1", 1)
    m = Member(s, conn, group, "A")
    regex = f"cg-rx-a\\d+-{s.token}"
    await m.join("A joins with a regex", regex=regex)
    await m.poll("A gets the matching topic", has(2), 5.0)
    await cg_describe(s, conn, [group], "described")
    await topic(s, conn, "cg-rx-a2", 1)
    await m.poll("A gets the topic created afterwards", has(3), 15.0)
    await m.beat("A with an invalid regex", subscribed_topic_regex="(")
    await m.beat(
        "A switches to topic names", JOIN_FIELDS, subscribed_topic_names=[s.name("cg-rx-b1")], subscribed_topic_regex=""
    )
    await m.poll("A gets the named topic only", has(1), 5.0)
    await cg_describe(s, conn, [group], "described after the switch")


@scenario("#14 metadata")
async def consumer_partitions_added(s: Session) -> None:
    """CreatePartitions on a subscribed topic makes a new target assignment: the member's assignment grows."""
    conn = await s.connect("client-p")
    group = s.name("cg-grow")
    name, _ = await topic(s, conn, "cg-grow-t", 2)
    m = Member(s, conn, group, "A")
    await m.join("A joins", [name])
    await m.poll("A gets both partitions", has(2), 5.0)
    await add_partitions(s, conn, name, 4, "to 4 partitions")
    await m.poll("A gets the new partitions", has(4), 5.0)
    await cg_describe(s, conn, [group], "described")


@scenario("#14 session timeout", settings=CONSUMER_SESSION_SETTINGS)
async def consumer_session_expiry(s: Session) -> None:
    """A member that stops heartbeating is removed after group.consumer.session.timeout.ms; its partitions go to
    the member that is left, and its next heartbeat is UNKNOWN_MEMBER_ID."""
    a, b, name = await first_of_two(s, "cg-expiry", 2)
    a_conn, group = a.conn, a.group
    await b.join("B joins", [name])
    await b.settle("B settles")
    await a.beat("A is told to revoke")
    await a.beat("A reports the partition released")
    await b.beat("B gets it")
    await b.beat("B reports it")
    await a.poll("A gets B's partition once B's session expired", has(2), 5.0)
    await cg_describe(s, a_conn, [group], "described")
    await b.beat("B heartbeats after expiring")
