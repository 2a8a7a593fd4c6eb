"""A seeded simulation of consumers against the coordinator on a manual clock, with invariants after every step.

Clients behave like real classic consumers (join, collect MEMBER_ID_REQUIRED, sync, heartbeat, commit, rejoin on
REBALANCE_IN_PROGRESS, reset on UNKNOWN_MEMBER_ID, stop when fenced), but only when the simulation picks them, and
some crash (go silent) or leave. A muted connection cannot send: a client with a parked request does nothing
until its reply completes. Time moves in random steps, sometimes past session timeouts; storage is sometimes slow
(appends wait for a random flush) or failing.

Invariants checked after every step (`check_invariants`):
* a group's generation never decreases;
* a Stable group's leader is a member;
* every member of a Stable group holds the assignment its leader sent for the current generation, and every
  client answered NONE by SyncGroup received exactly that;
* no member with a parked JoinGroup or SyncGroup is expired (checked when the expiry event is emitted; brand-new
  members hitting the new-member join timeout are Kafka's documented exception);
* every parked reply is completed exactly once (Reply asserts the "at most"; the end of the run the "at least");
* every live member, and every pending member id, has exactly one heartbeat deadline, and nothing else has one;
* the group's bookkeeping agrees with its members (awaiting count, protocol counts, static map, pending sync);
  JoinGroups are parked only in PreparingRebalance (or, for a static member's replacement id, in Stable while
  the group with the new id is being written) and SyncGroups only in CompletingRebalance.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from coordinator.keys import heartbeat_key
from coordinator.reply import Reply
from coordinator.state import GroupState
from protocol.errors import ErrorCode
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.messages.join_group import JoinGroupResponse
from protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from protocol.messages.sync_group import SyncGroupResponse
from tests.coordinator.harness import CoordinatorTestContext, EventRecorder

OK = ErrorCode.NONE


class InvariantError(AssertionError):
    pass


@dataclass
class Client:
    index: int
    group_id: str
    instance_id: str | None
    session_timeout_ms: int
    rebalance_timeout_ms: int
    topics: tuple[str, ...]
    member_id: str = ""
    generation: int = -1
    phase: str = "idle"  # idle | need_sync | stable | dead
    is_leader: bool = False
    leader_members: list[str] = field(default_factory=list)
    inflight: Reply[Any] | None = None
    assignment: bytes | None = None
    dead_until_ms: int = 0
    fenced: bool = False


class CheckingRecorder(EventRecorder):
    """Records events and checks the expiry invariant at the moment a member is expired."""

    def __init__(self) -> None:
        super().__init__()
        self.ctx: CoordinatorTestContext | None = None

    def info(self, event: str, **kw: Any) -> None:
        super().info(event, **kw)
        if event == "member.expired" and self.ctx is not None:
            group = self.ctx.coordinator.group(kw["group"])
            member = None if group is None else group.members.get(kw["member"])
            parked = member is not None and (member.awaiting_join is not None or member.awaiting_sync is not None)
            if parked and member is not None and not member.is_new:
                raise InvariantError(f"expired member {kw['member_id']} had a parked reply ({kw['reason']})")


class Simulation:
    def __init__(self, seed: int, *, clients: int = 8, groups: int = 2) -> None:
        self.rng = random.Random(seed)
        # Seeds also vary the configuration: the initial rebalance delay and a small group.max.size.
        variant = seed % 3
        self.ctx = CoordinatorTestContext(
            seed=seed,
            group_min_session_timeout_ms=1_000,
            offsets_commit_timeout_ms=3_000,
            initial_rebalance_delay_ms=3_000 if variant == 1 else 0,
            group_max_size=3 if variant == 2 else 2**31 - 1,
        )
        recorder = CheckingRecorder()
        recorder.ctx = self.ctx
        self.ctx.events = recorder
        self.ctx.coordinator._events._log = recorder  # route the coordinator's events through the checker
        self.clients = [
            Client(
                index=i,
                group_id=f"group-{i % groups}",
                instance_id=f"static-{i}" if i % 4 == 0 else None,
                session_timeout_ms=self.rng.choice([6_000, 10_000, 20_000]),
                rebalance_timeout_ms=self.rng.choice([5_000, 15_000, 30_000]),
                topics=tuple(sorted(self.rng.sample(["a", "b", "c", "d"], 2))),
            )
            for i in range(clients)
        ]
        self.replies: list[Reply[Any]] = []
        self.completions: dict[int, int] = {}
        self.max_generation: dict[str, int] = {}
        #: (group, generation) -> member id / instance id -> assignment the leader sent
        self.assignments: dict[tuple[str, int], dict[str, bytes]] = {}
        self.steps = 0

    # -- plumbing --------------------------------------------------------------------------------------------

    def _track(self, reply: Reply[Any], client: Client, kind: str) -> None:
        self.replies.append(reply)
        key = id(reply)
        self.completions[key] = 0

        def done(value: Any) -> None:
            self.completions[key] += 1
            if client.inflight is reply:
                client.inflight = None
            getattr(self, f"_on_{kind}")(client, value)

        client.inflight = reply
        reply.on_complete(done)

    def _reset(self, client: Client, *, keep_member_id: bool) -> None:
        if not keep_member_id:
            client.member_id = ""
            client.generation = -1
        client.phase = "idle"
        client.is_leader = False

    # -- responses -------------------------------------------------------------------------------------------

    def _on_join(self, client: Client, response: JoinGroupResponse) -> None:
        error = ErrorCode(response.error_code)
        if error is OK:
            client.member_id = response.member_id
            client.generation = response.generation_id
            client.is_leader = response.leader == response.member_id and not response.skip_assignment
            client.leader_members = [m.member_id for m in response.members]
            client.phase = "need_sync"
        elif error is ErrorCode.MEMBER_ID_REQUIRED:
            client.member_id = response.member_id
            client.phase = "idle"
        elif error is ErrorCode.FENCED_INSTANCE_ID or error is ErrorCode.GROUP_MAX_SIZE_REACHED:
            client.fenced = True
            client.phase = "dead"
            client.dead_until_ms = self.ctx.now_ms + 20_000
        elif error in (ErrorCode.UNKNOWN_MEMBER_ID,):
            self._reset(client, keep_member_id=False)
        else:
            self._reset(client, keep_member_id=True)

    def _on_sync(self, client: Client, response: SyncGroupResponse) -> None:
        error = ErrorCode(response.error_code)
        if error is OK:
            expected = self.assignments.get((client.group_id, client.generation))
            if expected is not None:
                want = expected.get(client.member_id, expected.get(f"instance:{client.instance_id}", b""))
                if response.assignment != want:
                    raise InvariantError(f"{client.member_id} got {response.assignment!r}, leader sent {want!r}")
            client.assignment = response.assignment
            client.phase = "stable"
        elif error is ErrorCode.FENCED_INSTANCE_ID:
            client.fenced = True
            client.phase = "dead"
            client.dead_until_ms = self.ctx.now_ms + 20_000
        elif error is ErrorCode.UNKNOWN_MEMBER_ID:
            self._reset(client, keep_member_id=False)
        else:
            self._reset(client, keep_member_id=True)

    def _on_commit(self, client: Client, response: Any) -> None:
        pass

    # -- actions ---------------------------------------------------------------------------------------------

    def _act(self, client: Client) -> None:
        ctx = self.ctx
        if client.inflight is not None:
            return  # muted: its connection waits for the parked reply
        if client.phase == "dead":
            if ctx.now_ms >= client.dead_until_ms:
                client.fenced = False
                self._reset(client, keep_member_id=client.instance_id is None and self.rng.random() < 0.5)
            return
        if client.phase == "idle":
            version = self.rng.choice([9, 9, 9, 5, 3])
            request = ctx.join_request(
                client.group_id,
                client.member_id,
                group_instance_id=client.instance_id if version >= 5 else None,
                session_timeout_ms=client.session_timeout_ms,
                rebalance_timeout_ms=client.rebalance_timeout_ms,
                topics=client.topics,
            )
            if client.instance_id is not None and version < 5:
                return
            reply = ctx.coordinator.join_group(ctx.ctx(version, f"client-{client.index}"), request, ctx.now_ms)
            self._track(reply, client, "join")
        elif client.phase == "need_sync":
            assignments = None
            if client.is_leader:
                assignments = {
                    m: f"{m}@{client.generation}".encode() for m in client.leader_members if self.rng.random() < 0.9
                }
                table = dict(assignments)
                group = ctx.coordinator.group(client.group_id)
                if group is not None:
                    for m in group.members.values():
                        if m.group_instance_id is not None:
                            table[f"instance:{m.group_instance_id}"] = assignments.get(m.member_id, b"")
                self.assignments[(client.group_id, client.generation)] = table
            request = ctx.sync_request(
                client.group_id,
                client.member_id,
                client.generation,
                group_instance_id=client.instance_id,
                assignments=assignments,
            )
            reply = ctx.coordinator.sync_group(ctx.ctx(5), request, ctx.now_ms)
            self._track(reply, client, "sync")
        else:
            roll = self.rng.random()
            if roll < 0.75:
                self._heartbeat(client)
            elif roll < 0.95:
                request = ctx.commit_request(
                    client.group_id,
                    {(t, p): self.rng.randrange(1000) for t in client.topics for p in range(2)},
                    member_id=client.member_id,
                    generation_id=client.generation,
                    group_instance_id=client.instance_id,
                )
                reply = ctx.coordinator.offset_commit(ctx.ctx(9), request, ctx.now_ms)
                self._track(reply, client, "commit")
            else:
                client.phase = "idle"  # the leader (or anyone) decides to rejoin

    def _heartbeat(self, client: Client) -> None:
        ctx = self.ctx
        response = ctx.coordinator.heartbeat(
            ctx.ctx(4),
            HeartbeatRequest(
                group_id=client.group_id,
                generation_id=client.generation,
                member_id=client.member_id,
                group_instance_id=client.instance_id,
            ),
            ctx.now_ms,
        )
        error = ErrorCode(response.error_code)
        if error in (ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.ILLEGAL_GENERATION):
            self._reset(client, keep_member_id=True)
        elif error is ErrorCode.UNKNOWN_MEMBER_ID:
            self._reset(client, keep_member_id=False)
        elif error is ErrorCode.FENCED_INSTANCE_ID:
            client.fenced = True
            client.phase = "dead"
            client.dead_until_ms = ctx.now_ms + 20_000

    def _leave(self, client: Client) -> None:
        if client.inflight is not None or not client.member_id or client.phase == "dead":
            return
        ctx = self.ctx
        ctx.coordinator.leave_group(
            ctx.ctx(5),
            LeaveGroupRequest(
                group_id=client.group_id,
                members=[MemberIdentity(member_id=client.member_id, group_instance_id=client.instance_id)],
            ),
            ctx.now_ms,
        )
        self._reset(client, keep_member_id=False)

    def _crash(self, client: Client) -> None:
        if client.phase == "dead":
            return
        client.phase = "dead"
        client.dead_until_ms = self.ctx.now_ms + self.rng.choice([1_000, 15_000, 40_000])
        # A crashed client's parked request is abandoned by its connection, but still answered by the broker.

    def _advance(self, ms: int) -> None:
        self.ctx.clock.advance(ms)
        self.ctx.tick()

    def step(self) -> None:
        rng, ctx = self.rng, self.ctx
        roll = rng.random()
        if roll < 0.68:
            self._act(rng.choice(self.clients))
        elif roll < 0.88:
            self._advance(rng.randrange(0, 600))
        elif roll < 0.90:
            self._advance(rng.randrange(1_000, 15_000))
        elif roll < 0.92:
            self._crash(rng.choice(self.clients))
        elif roll < 0.94:
            self._leave(rng.choice(self.clients))
        elif roll < 0.96:
            ctx.store.auto_durable = not ctx.store.auto_durable
            ctx.store.flush()
        elif roll < 0.99:
            ctx.store.flush()
        else:
            ctx.store.fail_next(rng.choice([ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.REQUEST_TIMED_OUT]))
        ctx.tick()
        self.steps += 1
        self.check_invariants()

    def finish(self) -> None:
        """Stop every client, let the storage catch up and every timer run out; every reply must be answered."""
        ctx = self.ctx
        ctx.store.auto_durable = True
        ctx.store.flush()
        for client in self.clients:
            client.phase = "dead"
            client.dead_until_ms = 10**15
        for _ in range(40):
            ctx.sleep(30_000)
            ctx.store.flush()
            self.check_invariants()
        pending = [r for r in self.replies if not r.done]
        if pending:
            raise InvariantError(f"{len(pending)} parked replies never completed")
        if any(count != 1 for count in self.completions.values()):
            raise InvariantError("a reply was completed more than once")
        for group in ctx.coordinator.groups():
            if group.members:
                raise InvariantError(f"{group.group_id} still has members after every client stopped")

    # -- invariants ------------------------------------------------------------------------------------------

    def check_invariants(self) -> None:
        coordinator = self.ctx.coordinator
        expected_keys = set()
        for group in coordinator.groups():
            gid = group.group_id
            if group.generation_id < self.max_generation.get(gid, 0):
                raise InvariantError(f"{gid}: generation went back to {group.generation_id}")
            self.max_generation[gid] = group.generation_id
            members = group.members
            if members and group.leader_id not in members:
                raise InvariantError(f"{gid}: leader {group.leader_id} is not a member")
            if group.state is GroupState.STABLE:
                table = self.assignments.get((gid, group.generation_id))
                for m in members.values():
                    want = b""
                    if table is not None:
                        want = table.get(m.member_id, table.get(f"instance:{m.group_instance_id}", b""))
                    if table is not None and m.assignment != want:
                        raise InvariantError(f"{gid}: Stable member {m.member_id} holds {m.assignment!r} != {want!r}")
            awaiting = sum(1 for m in members.values() if m.awaiting_join is not None)
            if awaiting != group.num_awaiting_join:
                raise InvariantError(f"{gid}: awaiting count {group.num_awaiting_join} != {awaiting}")
            counts: dict[str, int] = {}
            for m in members.values():
                for name in {n for n, _ in m.protocols}:
                    counts[name] = counts.get(name, 0) + 1
            if counts != group.supported_protocols:
                raise InvariantError(f"{gid}: protocol counts {group.supported_protocols} != {counts}")
            static = {m.group_instance_id: m.member_id for m in members.values() if m.group_instance_id is not None}
            if static != group.static_members:
                raise InvariantError(f"{gid}: static map {group.static_members} != {static}")
            if not group.pending_sync_members <= set(members):
                raise InvariantError(f"{gid}: pending-sync ids that are not members")
            if group.state is not GroupState.PREPARING_REBALANCE:
                # The only JoinGroup parked outside a rebalance: a static member's replacement id in a Stable
                # group, waiting for the group metadata with its new id to be durable (#17).
                for m in members.values():
                    if m.awaiting_join is not None and not (group.state is GroupState.STABLE and m.is_static):
                        raise InvariantError(f"{gid}: {m.member_id} has a parked join in {group.state}")
            if group.state is not GroupState.COMPLETING_REBALANCE and any(
                m.awaiting_sync is not None for m in members.values()
            ):
                raise InvariantError(f"{gid}: parked syncs outside CompletingRebalance ({group.state})")
            expected_keys |= {heartbeat_key(gid, m) for m in members}
            expected_keys |= {heartbeat_key(gid, m) for m in group.pending_members}
        actual_keys = {k for k in list(coordinator.timer.keys()) if isinstance(k, tuple) and k[0] == "heartbeat"}
        if actual_keys != expected_keys:
            raise InvariantError(f"heartbeat deadlines {sorted(actual_keys ^ expected_keys)} do not match members")


def run(seed: int, steps: int) -> Simulation:
    sim = Simulation(seed)
    for _ in range(steps):
        sim.step()
    sim.finish()
    return sim
