"""The two group protocols `bench_broker` forms groups with (classic, consumer), behind one face.

The formation and heartbeat tables of `bench_broker` are the same for both protocols: N members on their own
connections form a fresh group (timed), then a Stable group's members heartbeat back-to-back. What differs is how a
group forms (`bench.wire_load.GroupRun`: JoinGroup/SyncGroup; `bench.consumer_group_load.ConsumerGroupRun`:
ConsumerGroupHeartbeat), which heartbeat is pumped, which topics the groups need, and what the tables say; that is
a `GroupProtocol`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from bench.consumer_group_load import ConsumerGroupRun, consumer_heartbeat_version
from bench.peers import Broker, Peer
from bench.wire_load import HEARTBEAT_VERSION, JOIN_VERSION, SYNC_VERSION, Connection, GroupRun

MOCK = "mock"


class FormingGroup(Protocol):
    """What the tables need of one group: form it (seconds), the requests that took, its heartbeats, leave it."""

    @property
    def heartbeat_error_at(self) -> int:
        """Body bytes before the int16 error code in a heartbeat answer (after the correlation id)."""

    @property
    def formation_requests(self) -> int: ...

    async def form(self) -> float: ...

    async def leave(self) -> None: ...

    async def steady(self) -> None:
        """Once formed, until the group stopped changing (so that heartbeats of a fixed epoch are all valid)."""

    def heartbeat_frames(self, first_correlation_id: int) -> list[bytes]: ...


#: (group id, connections) -> a group of one member per connection, not yet formed.
GroupFactory = Callable[[str, Sequence[Connection]], FormingGroup]


@dataclass(frozen=True)
class Connected:
    """How groups are made on one started peer, and what they speak to it (for the table's notes)."""

    make_group: GroupFactory
    speaks: str


@dataclass(frozen=True)
class GroupProtocol:
    name: str
    formation_sizes: tuple[int, ...]
    #: Topics the groups subscribe to (name -> partitions): created on start, or seeded on a peer without CreateTopics.
    topics: Mapping[str, int]
    #: (peer, started broker, session/rebalance timeout ms) -> Connected; raises NotServed for a peer without it.
    connect: Callable[[Peer, Broker, int], Connected]
    formation_title: str
    requests_label: str
    heartbeat_title: str
    formation_notes: tuple[str, ...] = ()
    heartbeat_notes: tuple[str, ...] = ()
    #: The issue states targets (vs the mock) for the classic path only; the consumer tables show figures only.
    with_targets: bool = False


def _classic(peer: Peer, server: Broker, timeout_ms: int) -> Connected:
    def make(group_id: str, connections: Sequence[Connection]) -> FormingGroup:
        return GroupRun(group_id, connections, session_timeout_ms=timeout_ms, rebalance_timeout_ms=timeout_ms)

    return Connected(make, f"JoinGroup v{JOIN_VERSION}, SyncGroup v{SYNC_VERSION}, Heartbeat v{HEARTBEAT_VERSION}")


CLASSIC = GroupProtocol(
    name="classic",
    formation_sizes=(1, 10, 100, 1000),
    topics={},
    connect=_classic,
    formation_title="group formation (classic): first JoinGroup written -> last SyncGroup answer (ms), fresh group"
    " per run",
    requests_label="JoinGroups/member",
    heartbeat_title="heartbeats (classic): {members} members of a Stable group, one connection each, back-to-back"
    " Heartbeat v3",
    formation_notes=(
        "JoinGroups/member: 2 = the MEMBER_ID_REQUIRED round trip (the mock admits at once: 1); more = extra"
        " rebalance rounds",
        "the mock elects at once with whoever joined, then waits session.timeout-1s ({late_joiner_ms} ms here) for"
        " any later joiner: that timer, not its speed, sets its figure for N > 1",
    ),
    with_targets=True,
)


def consumer_topic(partitions: int) -> str:
    """The topic a consumer-protocol group of `partitions` members subscribes to: one partition per member."""
    return f"bench-cg-{partitions}"


CONSUMER_SIZES = (10, 100, 1000)


def _consumer(peer: Peer, server: Broker, timeout_ms: int) -> Connected:
    version = consumer_heartbeat_version(server.host, server.port)

    def make(group_id: str, connections: Sequence[Connection]) -> FormingGroup:
        return ConsumerGroupRun(
            group_id,
            connections,
            topic=consumer_topic(len(connections)),
            partitions=len(connections),
            version=version,
            regex_beside_names=peer.name == MOCK,
            rebalance_timeout_ms=timeout_ms,
        )

    return Connected(make, f"ConsumerGroupHeartbeat v{version}")


CONSUMER = GroupProtocol(
    name="consumer",
    formation_sizes=CONSUMER_SIZES,
    topics={consumer_topic(n): n for n in CONSUMER_SIZES},
    connect=_consumer,
    formation_title="group formation (consumer protocol, KIP-848): first ConsumerGroupHeartbeat (epoch 0) written ->"
    " every member stable at one epoch, assignment acknowledged, all partitions owned (ms), fresh group per run",
    requests_label="heartbeats/member",
    heartbeat_title="heartbeats (consumer protocol): {members} members of a stable group, one connection each,"
    " back-to-back ConsumerGroupHeartbeat keep-alives",
    formation_notes=(
        "topic bench-cg-N with N partitions (one per member), server-side default assignor; v1 with client-generated"
        " member ids (KIP-1082) where served, else v0",
        "a member acknowledges a new assignment at once (its next heartbeat carries the owned partitions), else"
        " heartbeats every 100 ms whatever interval the peer hands out (as the classic members probe)",
        "heartbeats/member: 2 = join + acknowledgement; more = assignments that changed as later members joined, and"
        " heartbeats answered COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS (sent again"
        " 100 ms later, as a consumer retries)",
        'the mock gets SubscribedTopicRegex "" beside the topic names: librdkafka 2.16\'s mock aborts on names'
        " with a null regex (rdkafka_mock_cgrp.c validate_subscription)",
        "'not served' = ConsumerGroupHeartbeat is not in the peer's ApiVersions (or answered UNSUPPORTED_VERSION)",
    ),
    heartbeat_notes=("a keep-alive: member id and epoch only (owned partitions, subscription null: unchanged)",),
)
