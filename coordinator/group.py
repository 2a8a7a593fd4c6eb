"""A classic group: its members, generation, leader, chosen protocol and state (Part 1.2, Kafka `ClassicGroup`).

This module is pure bookkeeping with invariants; it knows nothing about timers, persistence or responses to
requests other than the parked ones it holds. The coordinator (`coordinator/rebalance.py` and the API modules)
decides *when* to call these methods; this class guarantees the counts stay consistent (members awaiting join,
protocol support counts, static-instance map) and that every state change follows the transition table.
"""

from __future__ import annotations

from coordinator.errors import GroupError
from coordinator.member import ClassicMember, Protocols
from coordinator.offsets import GroupOffsets
from coordinator.reply import Reply
from coordinator.state import GroupState, check_transition
from protocol.errors import ErrorCode
from protocol.messages.join_group import JoinGroupResponse, JoinGroupResponseMember
from protocol.messages.sync_group import SyncGroupResponse

CONSUMER_PROTOCOL_TYPE = "consumer"
CLASSIC_GROUP_TYPE = "classic"


class ClassicGroup:
    """Group metadata of one classic group."""

    __slots__ = (
        "generation_id",
        "group_id",
        "leader_id",
        "members",
        "new_member_added",
        "num_awaiting_join",
        "offsets",
        "partition",
        "pending_members",
        "pending_sync_members",
        "previous_state",
        "protocol_name",
        "protocol_type",
        "rebalance_reason",
        "rebalance_started_ms",
        "state",
        "state_timestamp_ms",
        "static_members",
        "subscribed_topics",
        "supported_protocols",
    )

    def __init__(
        self,
        group_id: str,
        partition: int,
        *,
        state: GroupState = GroupState.EMPTY,
        state_timestamp_ms: int | None = None,
        generation_id: int = 0,
        protocol_type: str | None = None,
        protocol_name: str | None = None,
        leader_id: str | None = None,
    ) -> None:
        self.group_id = group_id
        self.partition = partition
        self.state = state
        self.previous_state = state
        self.state_timestamp_ms = state_timestamp_ms
        """Wall-clock time of the last state change (persisted as currentStateTimestamp; None if unknown)."""
        self.generation_id = generation_id
        self.protocol_type = protocol_type
        """None for a simple (offsets-only) group."""
        self.protocol_name = protocol_name
        self.leader_id = leader_id
        self.members: dict[str, ClassicMember] = {}
        """In join order, so "any remaining member" (new leader) is the longest-standing one."""
        self.static_members: dict[str, str] = {}
        """group instance id -> member id."""
        self.pending_members: set[str] = set()
        """Ids handed out with MEMBER_ID_REQUIRED that have not joined yet (KIP-394)."""
        self.pending_sync_members: set[str] = set()
        """Members that got a JoinGroup response of this generation but have not sent SyncGroup yet (#24)."""
        self.num_awaiting_join = 0
        self.supported_protocols: dict[str, int] = {}
        """protocol name -> number of members supporting it."""
        self.new_member_added = False
        """A member joined during the initial delay, so the delay is extended (KIP-134)."""
        self.subscribed_topics: frozenset[str] | None = None
        """Topics the consumer-protocol members subscribe to; None when unknown (then every topic counts)."""
        self.offsets = GroupOffsets()
        self.rebalance_started_ms: int | None = None
        self.rebalance_reason = ""

    def __repr__(self) -> str:
        return (
            f"ClassicGroup({self.group_id!r}, {self.state.value}, generation={self.generation_id}, "
            f"members={list(self.members)}, leader={self.leader_id!r})"
        )

    # -- state -----------------------------------------------------------------------------------------------

    def is_in(self, state: GroupState) -> bool:
        return self.state is state

    def transition_to(self, target: GroupState, wall_ms: int) -> GroupState:
        """Move to `target` (checked against the transition table); returns the state left."""
        check_transition(self.group_id, self.state, target)
        old = self.state
        self.previous_state = old
        self.state = target
        self.state_timestamp_ms = wall_ms
        return old

    def can_rebalance(self) -> bool:
        return self.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY)

    @property
    def group_type(self) -> str:
        return CLASSIC_GROUP_TYPE

    @property
    def uses_consumer_protocol(self) -> bool:
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    # -- members ---------------------------------------------------------------------------------------------

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def member(self, member_id: str) -> ClassicMember:
        return self.members[member_id]

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def static_member_id(self, group_instance_id: str) -> str | None:
        return self.static_members.get(group_instance_id)

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_members

    def validate_member(self, member_id: str, group_instance_id: str | None) -> ClassicMember:
        """Rule #18: fenced instance -> FENCED_INSTANCE_ID; unknown instance or member -> UNKNOWN_MEMBER_ID."""
        if group_instance_id is not None:
            existing = self.static_members.get(group_instance_id)
            if existing is None:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID)
            if existing != member_id:
                raise GroupError(ErrorCode.FENCED_INSTANCE_ID)
        member = self.members.get(member_id)
        if member is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID)
        return member

    def add(self, member: ClassicMember, join_reply: Reply[JoinGroupResponse] | None) -> None:
        """Add a member (parking its JoinGroup reply, if any); the first member sets the protocol type."""
        if not self.members:
            self.protocol_type = member.protocol_type
        assert self.protocol_type == member.protocol_type, "protocol type checked by supports_protocols"
        assert member.member_id not in self.members
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self._count_protocols(member.protocols, +1)
        member.awaiting_join = join_reply
        if join_reply is not None:
            self.num_awaiting_join += 1
        self.pending_members.discard(member.member_id)

    def remove(self, member_id: str) -> ClassicMember | None:
        """Drop a member (or a pending member id); a removed leader is replaced by the longest-standing member."""
        member = self.members.pop(member_id, None)
        if member is not None:
            self._count_protocols(member.protocols, -1)
            if member.awaiting_join is not None:
                self.num_awaiting_join -= 1
            if member.group_instance_id is not None and self.static_members.get(member.group_instance_id) == member_id:
                del self.static_members[member.group_instance_id]
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        self.pending_members.discard(member_id)
        self.pending_sync_members.discard(member_id)
        return member

    def update_member(
        self,
        member: ClassicMember,
        protocols: Protocols,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        join_reply: Reply[JoinGroupResponse] | None,
    ) -> None:
        """Take a rejoining member's new protocols and timeouts, and park (or clear) its JoinGroup reply.

        A JoinGroup reply that is already parked for this member is superseded: the caller completes it first
        (a muted connection cannot send two JoinGroups, so the old one belongs to a connection that gave up).
        """
        assert member.awaiting_join is None or join_reply is None, "caller completes a superseded reply first"
        self._count_protocols(member.protocols, -1)
        member.protocols = protocols
        self._count_protocols(protocols, +1)
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        if join_reply is not None and member.awaiting_join is None:
            self.num_awaiting_join += 1
        elif join_reply is None and member.awaiting_join is not None:
            self.num_awaiting_join -= 1
        member.awaiting_join = join_reply

    def replace_static_member(self, group_instance_id: str, old_member_id: str, new_member_id: str) -> ClassicMember:
        """A static member came back with an unknown member id (KIP-345, #17): the old id is fenced.

        Any JoinGroup or SyncGroup still parked under the old id is answered FENCED_INSTANCE_ID at once. The new
        member inherits everything else, including the assignment, leadership and pending-sync status.
        """
        old = self.members[old_member_id]
        self.complete_join(
            old,
            JoinGroupResponse(error_code=ErrorCode.FENCED_INSTANCE_ID, member_id=old_member_id),
        )
        self.complete_sync(old, SyncGroupResponse(error_code=ErrorCode.FENCED_INSTANCE_ID))
        del self.members[old_member_id]
        new = ClassicMember(
            member_id=new_member_id,
            group_instance_id=old.group_instance_id,
            client_id=old.client_id,
            client_host=old.client_host,
            rebalance_timeout_ms=old.rebalance_timeout_ms,
            session_timeout_ms=old.session_timeout_ms,
            protocol_type=old.protocol_type,
            protocols=old.protocols,
            assignment=old.assignment,
        )
        self.members[new_member_id] = new
        if self.leader_id == old_member_id:
            self.leader_id = new_member_id
        if old_member_id in self.pending_sync_members:
            self.pending_sync_members.discard(old_member_id)
            self.pending_sync_members.add(new_member_id)
        self.static_members[group_instance_id] = new_member_id
        return new

    # -- parked replies --------------------------------------------------------------------------------------

    def complete_join(self, member: ClassicMember, response: JoinGroupResponse) -> bool:
        """Answer the member's parked JoinGroup, if any; returns whether one was parked."""
        reply = member.awaiting_join
        if reply is None:
            return False
        member.awaiting_join = None
        if member.member_id in self.members and self.members[member.member_id] is member:
            self.num_awaiting_join -= 1
        reply.complete(response)
        return True

    def complete_sync(self, member: ClassicMember, response: SyncGroupResponse) -> bool:
        """Answer the member's parked SyncGroup, if any; returns whether one was parked."""
        reply = member.awaiting_sync
        if reply is None:
            return False
        member.awaiting_sync = None
        reply.complete(response)
        return True

    # -- protocols -------------------------------------------------------------------------------------------

    def _count_protocols(self, protocols: Protocols, delta: int) -> None:
        counts = self.supported_protocols
        for name in {name for name, _ in protocols}:
            left = counts.get(name, 0) + delta
            if left:
                counts[name] = left
            else:
                counts.pop(name, None)

    def supports_protocols(self, protocol_type: str, protocols: Protocols) -> bool:
        """Rule #10: can a member offering these protocols be in this group?"""
        if self.state is GroupState.EMPTY:
            return bool(protocol_type) and bool(protocols)
        size = len(self.members)
        counts = self.supported_protocols
        return self.protocol_type == protocol_type and any(counts.get(name, 0) == size for name, _ in protocols)

    def candidate_protocols(self) -> list[str]:
        size = len(self.members)
        return [name for name, count in self.supported_protocols.items() if count == size]

    def select_protocol(self) -> str:
        """Rule #14: every member votes for its most preferred candidate; most votes wins.

        Kafka breaks ties by hash-map order (not deterministic across versions); here the tie goes to the
        protocol that received its first vote first, i.e. in member join order.
        """
        if not self.members:
            raise ValueError(f"cannot select a protocol for empty group {self.group_id!r}")
        candidates = set(self.candidate_protocols())
        votes: dict[str, int] = {}
        for member in self.members.values():
            choice = member.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        return max(votes, key=votes.__getitem__)

    # -- rebalance bookkeeping -------------------------------------------------------------------------------

    def rebalance_timeout_ms(self) -> int:
        """The group's rebalance timeout: the maximum of its members' (Part 1.2)."""
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def has_all_members_joined(self) -> bool:
        """Rule #13: every known member has a parked JoinGroup and no MEMBER_ID_REQUIRED id is outstanding."""
        return len(self.members) == self.num_awaiting_join and not self.pending_members

    def not_yet_rejoined_members(self) -> list[ClassicMember]:
        return [m for m in self.members.values() if m.awaiting_join is None]

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep the leader if it rejoined, else pick the first rejoined member; False if nobody rejoined."""
        if self.leader_id is None:
            return False
        leader = self.members.get(self.leader_id)
        if leader is not None and leader.awaiting_join is not None:
            return True
        for member in self.members.values():
            if member.awaiting_join is not None:
                self.leader_id = member.member_id
                return True
        return False

    def init_next_generation(self, wall_ms: int) -> None:
        """Bump the generation; with members, choose the protocol and await sync, else become Empty."""
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.transition_to(GroupState.COMPLETING_REBALANCE, wall_ms)
        else:
            self.protocol_name = None
            self.transition_to(GroupState.EMPTY, wall_ms)
        self.pending_sync_members.clear()

    def leader_member_list(self) -> list[JoinGroupResponseMember]:
        """What the leader's JoinGroup response carries: every member with its metadata for the chosen protocol."""
        protocol = self.protocol_name
        assert protocol is not None
        return [
            JoinGroupResponseMember(
                member_id=m.member_id, group_instance_id=m.group_instance_id, metadata=m.metadata(protocol)
            )
            for m in self.members.values()
        ]

    def has_received_sync_from_all_members(self) -> bool:
        return not self.pending_sync_members

    def is_subscribed_to_topic(self, topic: str) -> bool:
        """Unknown subscriptions (non-consumer groups, unparsable metadata) count as subscribed to everything."""
        topics = self.subscribed_topics
        return True if topics is None else topic in topics
