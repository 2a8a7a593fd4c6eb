"""The classic group's states, each documented as the protocol it speaks, and the table of legal transitions.

Rule 1: a group is in exactly one state; every state change goes through `check_transition`, which raises on a
transition that the table below does not list (h11's style: the state machine is data, and a missing entry is a
bug, not a silent no-op).

Rule 2: the docstring of each state *is* the spec of how each API is answered in it ("action") and what moves the
group out of it ("transition"), in the format of Kafka's `ClassicGroupState`, updated to what modern Kafka does
(group-protocol.md Part 2). Groups are created in `Empty` (or, when loaded from `__consumer_offsets`, directly in
`Empty` or `Stable`, rule #46), so no transition *into* the initial state is needed for creation.
"""

from __future__ import annotations

from enum import Enum


class GroupState(Enum):
    """Where a classic group is in its life; `.value` is Kafka's wire spelling (DescribeGroups, ListGroups).

    Each member carries its own docstring (`GroupState.STABLE.__doc__`): the protocol spoken in that state.
    """

    _value_: str

    def __new__(cls, wire_name: str, doc: str) -> GroupState:
        member = object.__new__(cls)
        member._value_ = wire_name
        member.__doc__ = doc
        return member

    EMPTY = (
        "Empty",
        """The group has no members; it lingers for its committed offsets.

    Also the state of "simple" groups, created by an OffsetCommit with generation -1, that use Kafka only to store
    offsets and have no protocol type.

    action: JoinGroup from a new member (empty member id) -> accepted; starts the initial rebalance (its join is
                parked for group.initial.rebalance.delay.ms, KIP-134)
            JoinGroup with a member id -> UNKNOWN_MEMBER_ID
            SyncGroup -> UNKNOWN_MEMBER_ID
            Heartbeat -> UNKNOWN_MEMBER_ID
            LeaveGroup -> UNKNOWN_MEMBER_ID per member
            OffsetCommit with generation < 0 (simple/admin consumer) -> stored; otherwise the member checks fail
                -> UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID
            OffsetFetch -> answered
            DescribeGroups -> state "Empty", no members
            DeleteGroups -> deleted (offsets and group tombstoned)
            OffsetDelete -> every requested partition deleted
    transition: JoinGroup from a new member => PREPARING_REBALANCE
                retention sweep removed the last offset => DEAD
                DeleteGroups => DEAD
                partition unloaded (emigration) => DEAD
    """,
    )

    PREPARING_REBALANCE = (
        "PreparingRebalance",
        """A member joined, changed or left: waiting for every member to (re)send JoinGroup.

    action: JoinGroup from new or known members -> parked until every known member has rejoined and no
                MEMBER_ID_REQUIRED member is pending, or until the rebalance timeout (max of the members'
                rebalance timeouts); from an Empty group, until the initial delay has run out instead
            SyncGroup -> REBALANCE_IN_PROGRESS
            Heartbeat -> REBALANCE_IN_PROGRESS, and the session timer is reset
            LeaveGroup -> member removed; the join may complete
            OffsetCommit -> stored for the current generation (commits of the generation being rebalanced are
                still welcome), and the session timer is reset
            OffsetFetch -> answered
            DescribeGroups -> members without metadata or assignment
            DeleteGroups -> NON_EMPTY_GROUP
    transition: some members have joined by the timeout, or all have => COMPLETING_REBALANCE
                all members left or expired by the time the join completes => EMPTY
                partition unloaded => DEAD
    """,
    )

    COMPLETING_REBALANCE = (
        "CompletingRebalance",
        """JoinGroup responses went out for a new generation; waiting for the leader's SyncGroup with the assignment.

    action: SyncGroup of the current generation -> parked (and the session timer reset); the leader's SyncGroup
                persists the group with its assignment and, once durable, answers every parked SyncGroup
            Heartbeat -> NONE, session timer reset (clients heartbeat between JoinGroup and SyncGroup)
            JoinGroup from a known member with identical protocols -> the current generation again
                (the leader gets the member list again), no rebalance
            JoinGroup with changed protocols, or from a new member -> rebalance
            JoinGroup of a known static member with a new member id -> always a rebalance (KAFKA-9801)
            OffsetCommit -> REBALANCE_IN_PROGRESS
            OffsetFetch -> answered
            DescribeGroups -> members without metadata or assignment
            DeleteGroups -> NON_EMPTY_GROUP
    transition: leader's assignment persisted => STABLE
                JoinGroup from a new member or with changed metadata => PREPARING_REBALANCE
                LeaveGroup, session expiry, or SyncGroup not received within the rebalance timeout
                    => PREPARING_REBALANCE
                the persisted assignment failed to write => PREPARING_REBALANCE
                partition unloaded => DEAD
    """,
    )

    STABLE = (
        "Stable",
        """Assignments went out; members heartbeat.

    action: Heartbeat -> NONE, session timer reset
            SyncGroup from any member (even repeated) -> its assignment of the current generation, at once
            JoinGroup from a follower with unchanged protocols -> the current generation (empty member list)
            JoinGroup from the leader, or with changed protocols -> rebalance
            JoinGroup of a known static member with a new member id -> the old id is fenced and replaced; no
                rebalance if the selected protocol would not change
            OffsetCommit from a member of the current generation -> stored, session timer reset
            OffsetFetch -> answered
            DescribeGroups -> protocol name, members with metadata and assignment
            DeleteGroups -> NON_EMPTY_GROUP
    transition: member failure (session expiry) => PREPARING_REBALANCE
                LeaveGroup => PREPARING_REBALANCE
                leader JoinGroup, or JoinGroup with new metadata => PREPARING_REBALANCE
                followers that never sent SyncGroup within the rebalance timeout => PREPARING_REBALANCE
                partition unloaded => DEAD
    """,
    )

    DEAD = (
        "Dead",
        """The group is gone: deleted, expired, or its partition was unloaded. It stays visible only until its
    tombstones are durable (or not at all, after unloading).

    action: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit -> COORDINATOR_NOT_AVAILABLE (the client
                retries, finds the coordinator again and starts over)
            OffsetFetch -> offset -1 for every requested partition
            DescribeGroups -> state "Dead"
            DeleteGroups, OffsetDelete -> GROUP_ID_NOT_FOUND
    transition: none; DEAD is final
    """,
    )

    @property
    def lower(self) -> str:
        """Lower-case spelling, for ListGroups' case-insensitive state filter."""
        return self._value_.lower()


#: For each state, the states it may be entered from (Kafka's `addValidPreviousStates`).
VALID_PREVIOUS: dict[GroupState, frozenset[GroupState]] = {
    GroupState.EMPTY: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.PREPARING_REBALANCE: frozenset({GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY}),
    GroupState.COMPLETING_REBALANCE: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.STABLE: frozenset({GroupState.COMPLETING_REBALANCE}),
    GroupState.DEAD: frozenset(
        {
            GroupState.STABLE,
            GroupState.PREPARING_REBALANCE,
            GroupState.COMPLETING_REBALANCE,
            GroupState.EMPTY,
            GroupState.DEAD,
        }
    ),
}

STATE_BY_LOWER_NAME: dict[str, GroupState] = {state.lower: state for state in GroupState}


class IllegalStateTransitionError(AssertionError):
    """A transition the table does not allow: a coordinator bug."""


def check_transition(group_id: str, current: GroupState, target: GroupState) -> None:
    """Raise unless `current -> target` is in `VALID_PREVIOUS`."""
    if current not in VALID_PREVIOUS[target]:
        raise IllegalStateTransitionError(
            f"group {group_id!r} should be in one of {sorted(s.value for s in VALID_PREVIOUS[target])} "
            f"before moving to {target.value}, but is in {current.value}"
        )
