"""Everything a test (or an operator) can do to a running broker, each control declared here and only here.

Each control takes Kafka's own code path (a session expiry, a partition unload, an append error), so clients react
exactly as they would in production, only on demand. A control is a method with `@control(...)` (see
`toolkit/control_spec.py`): the pytest handle (`toolkit/handle.py`) relays it from the test's thread onto the
broker's loop with this very signature and docstring, and the HTTP control API (`toolkit/control_api.py`) serves
it at the declared route, reading the parameters from the JSON body by their type hints and answering through
`answer`. To add a control, add a method here and a row to the README's two tables (a test checks they match).

This module stays a leaf at import time (stdlib only): the pytest plugin builds its handle from these declarations
in every pytest run, before any broker exists. The server is imported only for type checking, and the Kafka name
tables (`toolkit/names.py`) only when a control runs.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Annotated, Any

from toolkit.control_spec import AtLeast, ControlError, control
from toolkit.frozen_wait import FrozenWait, PendingTimer

if TYPE_CHECKING:
    from broker.app import Broker
    from broker.leadership import LeaderChange
    from toolkit.coordinator_moves import CoordinatorMoves
    from toolkit.faults import Faults
    from toolkit.group_activity import GroupActivity
    from toolkit.marker_faults import MarkerFaults
    from toolkit.node_partitions import NodePartitions

Count = Annotated[int, AtLeast(1)]
"""How many requests (or appends) a fault applies to: at least one."""


def _log() -> Any:
    """The controls' logger, imported when a control runs (this module stays a stdlib-only leaf)."""
    import structlog

    return structlog.get_logger("toolkit.controls")


def _clock(controls: BrokerControls, args: Mapping[str, Any], result: Any) -> Any:
    return controls.clock()


def _result(key: str) -> Any:
    return lambda controls, args, result: {key: result}


def _constant(answer: dict[str, Any]) -> Any:
    return lambda controls, args, result: answer


def _error_rule(controls: BrokerControls, args: Mapping[str, Any], result: Any) -> Any:
    from toolkit.names import api_key_of, error_of

    return {
        "api": api_key_of(args["api"]).name,
        "error": error_of(args["error"]).name,
        "count": args["count"],
        "group_id": args["group_id"],
        "client_id": args["client_id"],
    }


def _latency_rule(controls: BrokerControls, args: Mapping[str, Any], result: Any) -> Any:
    from toolkit.names import api_key_of

    return {"api": api_key_of(args["api"]).name, "delay_ms": args["delay_ms"], "count": args["count"]}


def _failing_appends(controls: BrokerControls, args: Mapping[str, Any], result: Any) -> Any:
    from toolkit.names import error_of

    return {"failing": error_of(args["error"]).name, "count": args["count"]}


def _existing_group(controls: BrokerControls, group_id: str) -> dict[str, Any]:
    snapshot = controls.group(group_id)
    if snapshot is None:
        raise ControlError(404, f"no group {group_id!r} on this broker")
    return snapshot


def _group(controls: BrokerControls, args: Mapping[str, Any], result: Any) -> Any:
    return _existing_group(controls, args["group_id"])


def _expired(controls: BrokerControls, args: Mapping[str, Any], result: Any) -> Any:
    group_id, member_id = args["group_id"], args["member_id"]
    if not result:
        raise ControlError(404, f"no member {member_id!r} in group {group_id!r}")
    return {"expired": member_id, "group": controls.group(group_id)}


def _rebalancing(controls: BrokerControls, args: Mapping[str, Any], result: Any) -> Any:
    group_id = args["group_id"]
    snapshot = _existing_group(controls, group_id)
    if not result:
        raise ControlError(
            400,
            f"group {group_id!r} cannot be rebalanced now (state {snapshot['state']}): "
            "it needs members and to be Stable or CompletingRebalance",
        )
    return {"rebalancing": True, "group": snapshot}


def _new_target(controls: BrokerControls, args: Mapping[str, Any], result: Any) -> Any:
    group_id = args["group_id"]
    snapshot = _existing_group(controls, group_id)
    if not result:
        raise ControlError(
            400,
            f"group {group_id!r} gets no new target assignment: it needs to be a consumer group with members "
            f"(it is a {snapshot['group_type']} group, {snapshot['state']})",
        )
    return {"group_epoch": snapshot["group_epoch"], "group": snapshot}


def _loading(controls: BrokerControls, args: Mapping[str, Any], result: Any) -> Any:
    return {"partition": result, "duration_ms": args["duration_ms"]}


def _failing_markers(controls: BrokerControls, args: Mapping[str, Any], result: Any) -> Any:
    from toolkit.names import error_of

    return {
        "failing": error_of(args["error"]).name,
        "count": args["count"],
        "transactional_id": args["transactional_id"],
    }


def _delayed_markers(controls: BrokerControls, args: Mapping[str, Any], result: Any) -> Any:
    return {"delay_ms": args["delay_ms"], "count": args["count"], "transactional_id": args["transactional_id"]}


def _auth_rule(controls: BrokerControls, args: Mapping[str, Any], result: Any) -> Any:
    return {key: value for key, value in args.items() if value is not None}


def _transaction(controls: BrokerControls, args: Mapping[str, Any], result: Any) -> Any:
    transactional_id = args["transactional_id"]
    if result is None:
        raise ControlError(404, f"no transactional id {transactional_id!r} on this broker")
    return result


def _transactions(controls: BrokerControls, args: Mapping[str, Any], result: Any) -> Any:
    return {"transactions": result}


def _expired_transaction(controls: BrokerControls, args: Mapping[str, Any], result: Any) -> Any:
    transactional_id = args["transactional_id"]
    snapshot = _transaction(controls, args, controls.transaction(transactional_id))
    if not result:
        raise ControlError(
            400,
            f"transactional id {transactional_id!r} has no transaction to abort now (state {snapshot['state']}"
            + (f", {snapshot['pending_state']} being written" if snapshot["pending_state"] else "")
            + "): only an Ongoing transaction times out",
        )
    return {"expired": transactional_id, "transaction": snapshot}


def _change(change: LeaderChange) -> dict[str, Any]:
    return {
        "topic": change.topic,
        "partition": change.partition,
        "leader_before": change.before,
        "leader": change.after,
    }


def _leader_changes(controls: BrokerControls, args: Mapping[str, Any], result: Any) -> Any:
    return {"leader_changes": result}


def _partitioned(controls: BrokerControls, args: Mapping[str, Any], result: Any) -> Any:
    return {"node_id": args["node_id"], "client_id": args["client_id"], "new": result}


def _healed(controls: BrokerControls, args: Mapping[str, Any], result: Any) -> Any:
    return {"healed": result}


class BrokerControls:
    """The controls of one broker. Call them on the broker's loop (the handle and the control API do)."""

    def __init__(
        self,
        broker: Broker,
        faults: Faults,
        moves: CoordinatorMoves,
        activity: GroupActivity,
        markers: MarkerFaults,
        partitions: NodePartitions,
    ) -> None:
        self._broker = broker
        self._faults = faults
        self._partitions = partitions
        self._moves = moves
        self._activity = activity
        self._markers = markers

    def _now(self) -> int:
        return self._broker.clock.monotonic_ms()

    # -- time ----------------------------------------------------------------------------------------------------

    @control("GET", "/time", answer=_clock)
    def clock(self) -> dict[str, Any]:
        """The broker clock: `now_ms` (monotonic), `wall_ms`, and whether it is `frozen`."""
        clock = self._broker.clock
        return {"now_ms": clock.monotonic_ms(), "wall_ms": clock.wall_ms(), "frozen": clock.frozen}

    @control("POST", "/time/advance", answer=_clock)
    def advance(self, ms: int) -> None:
        """Move the broker clock, fire due timers.

        Every timer now due fires at once (sessions, rebalance and sync timeouts, the initial delay, offset
        retention, log retention), so a test sees a timeout without waiting for it."""
        self._broker.advance_time(ms)

    @control("POST", "/time/freeze", answer=_clock)
    def freeze_time(self) -> None:
        """Time moves only by advance from now on.

        Stops the broker's clock, so a test decides alone when sessions and timeouts run out."""
        self._broker.clock.freeze()
        self._broker.rearm_timers()
        _log().info("controls.time_frozen", now_ms=self._now())

    @control("POST", "/time/unfreeze", answer=_clock)
    def unfreeze_time(self) -> None:
        """Time flows again, from the virtual instant reached.

        Undoes `freeze_time`: timers run on their own again, and the clock never goes back."""
        self._broker.clock.unfreeze()
        self._broker.rearm_timers()
        _log().info("controls.time_unfrozen", now_ms=self._now())

    def frozen_timer_blocking(self, group_id: str, members: int | None = None) -> FrozenWait | None:
        """The group's pending timers when time is frozen and a timer could move it on, else None.

        Not a control: `wait_for_group` asks it so that a test waiting on a frozen clock fails fast, with the
        `advance` it needs, instead of timing out (its docstring gives the rule). None when time flows, the group
        is unknown, no timer is pending, a timer is already due (it fires on the event loop's next turn, frozen or
        not), or the wait wants more `members` than the group has (timers only ever
        remove members: only a client's JoinGroup adds one). `exact` when the group is PreparingRebalance with
        every member parked in its JoinGroup: only its timer (the initial delay, KIP-134, or the rebalance
        timeout) completes the join."""
        from coordinator.keys import heartbeat_key, join_key, sync_key
        from coordinator.state import GroupState

        clock = self._broker.clock
        coordinator = self._broker.coordinator
        consumer_group = coordinator.consumer_group(group_id)
        if consumer_group is not None:
            if not clock.frozen or (members is not None and members > len(consumer_group.members)):
                return None
            from toolkit.consumer_groups import consumer_frozen_wait

            return consumer_frozen_wait(coordinator, group_id, clock.monotonic_ms(), self._activity.requests(group_id))
        group = coordinator.group(group_id)
        if not clock.frozen or group is None or (members is not None and members > len(group.members)):
            return None
        keys: list[tuple[str, Hashable]] = [
            ("join/rebalance", join_key(group_id)),
            ("sync timeout", sync_key(group_id)),
        ]
        keys += [(f"session of member {m}", heartbeat_key(group_id, m)) for m in group.members]
        keys += [(f"pending member id {m}", heartbeat_key(group_id, m)) for m in sorted(group.pending_members)]
        now = clock.monotonic_ms()
        deadlines = [(what, when) for what, key in keys if (when := coordinator.timer.deadline(key)) is not None]
        if not deadlines or any(when <= now for _, when in deadlines):
            return None  # nothing pending, or a timer is due now and fires without an advance (initial delay 0)
        timers = tuple(PendingTimer(what, when - now) for what, when in deadlines)
        exact = group.is_in(GroupState.PREPARING_REBALANCE) and group.has_all_members_joined()
        fingerprint = (
            group.state.value,
            group.generation_id,
            tuple(sorted(group.members)),
            group.num_awaiting_join,
            tuple(sorted(group.pending_members)),
            tuple(sorted(group.pending_sync_members)),
            self._activity.requests(group_id),
        )
        return FrozenWait(group_id, group.state.value, group.generation_id, timers, exact, fingerprint)

    # -- faults --------------------------------------------------------------------------------------------------

    @control("POST", "/faults/errors", answer=_error_rule)
    def inject_error(
        self,
        api: str | int,
        error: str | int,
        count: Count = 1,
        *,
        group_id: str | None = None,
        client_id: str | None = None,
    ) -> None:
        """Answer the next requests of an API with an error.

        The next `count` requests of `api` (optionally only those of one group or client id) are answered with
        `error`, in the shape Kafka uses for that API. APIs and errors are Kafka's names or codes."""
        from toolkit.names import api_key_of, error_of

        self._faults.inject_error(api_key_of(api), error_of(error), count, group_id=group_id, client_id=client_id)

    @control("POST", "/faults/latency", answer=_latency_rule)
    def add_latency(self, api: str | int, delay_ms: int, count: Count | None = None) -> None:
        """Slow an API down.

        The next `count` requests of `api` (all of them when None) wait `delay_ms` on the broker clock before
        they are handled; other connections are served meanwhile."""
        from toolkit.names import api_key_of

        self._faults.add_latency(api_key_of(api), delay_ms, count)

    @control("DELETE", "/faults", answer=_constant({"cleared": True}))
    def clear_faults(self) -> None:
        """Clear every injected error and latency.

        Every other fault rule goes too (offsets appends, markers, authentications), and node partitions heal."""
        self._faults.clear()
        self._partitions.heal()

    @control("POST", "/connections/drop", answer=_result("dropped"))
    def drop_connections(self, client_id: str | None = None) -> int:
        """Close client connections (omit client_id: every connection).

        As a network failure would; returns how many were closed."""
        dropped = 0
        for connection in list(self._broker.connections):
            if client_id is None or connection.session.client_id == client_id:
                connection.close()
                dropped += 1
        _log().info("controls.connections_dropped", client_id=client_id, count=dropped)
        return dropped

    @control("POST", "/offsets/fail-next", answer=_failing_appends)
    def fail_next_offsets_append(self, error: str | int = "NOT_LEADER_OR_FOLLOWER", count: Count = 1) -> None:
        """Fail the next __consumer_offsets appends.

        The coordinator remaps the error as Kafka does, so clients see e.g. NOT_COORDINATOR."""
        from toolkit.names import error_of

        self._faults.offsets_append_errors.extend([error_of(error)] * count)

    @control("POST", "/faults/handshakes", answer=_auth_rule)
    def fail_next_handshakes(self, count: Count = 1, *, listener: str | None = None) -> None:
        """Refuse the next TLS handshakes.

        The next `count` connections to an SSL listener (`listener`, or any) are closed before their TLS handshake
        completes, as a broker refusing the client would, with a `connection.tls_handshake_failed` log line saying
        the toolkit did it. Clients see their handshake cut off and retry (or report an SSL error)."""
        from toolkit.faults import TLS_HANDSHAKE, AuthRule

        self._check_listener(listener, ("SSL", "SASL_SSL"), "SSL")
        self._faults.fail_authentications(AuthRule(TLS_HANDSHAKE, count, listener))

    @control("POST", "/faults/authentications", answer=_auth_rule)
    def fail_next_authentications(
        self,
        count: Count = 1,
        *,
        listener: str | None = None,
        client_id: str | None = None,
        mechanism: str | None = None,
        username: str | None = None,
    ) -> None:
        """Fail the next SASL authentications.

        The next `count` SASL authentications (optionally only of one listener, client id, mechanism or username)
        fail as a wrong password does, after the client's credentials were verified: SASL_AUTHENTICATION_FAILED
        with Kafka's message for the mechanism, then the connection closed, with one `security.authentication_failed`
        line saying the toolkit did it. Refused on a broker without a SASL listener (SASL_PLAINTEXT or SASL_SSL)."""
        from toolkit.faults import SASL_AUTHENTICATION, AuthRule

        self._check_listener(listener, ("SASL_PLAINTEXT", "SASL_SSL"), "SASL")
        rule = AuthRule(SASL_AUTHENTICATION, count, listener, client_id, mechanism, username)
        self._faults.fail_authentications(rule)

    def _check_listener(self, listener: str | None, protocols: tuple[str, ...], kind: str) -> None:
        """Refuse an authentication fault that no listener of this broker could ever meet."""
        config = self._broker.config
        protocol_of = config.security_protocol_map
        names = [name for name, _, _ in config.listeners if protocol_of.get(name.upper()) in protocols]
        if not names:
            raise ValueError(f"this broker has no {kind} listener (its listeners: {', '.join(config['listeners'])})")
        if listener is not None and listener.upper() not in {name.upper() for name in names}:
            raise ValueError(f"{listener!r} is not one of this broker's {kind} listeners ({', '.join(names)})")

    @control("POST", "/faults/markers/fail-next", answer=_failing_markers)
    def fail_next_markers(
        self, error: str | int = "NOT_LEADER_OR_FOLLOWER", count: Count = 1, *, transactional_id: str | None = None
    ) -> None:
        """Fail the next transaction marker writes.

        The next `count` rounds of COMMIT/ABORT markers (optionally only those of one transactional id) fail with
        `error` and write nothing. The coordinator reacts as Kafka's does to a WriteTxnMarkers answer: a retriable
        error (NOT_LEADER_OR_FOLLOWER, the default) is retried after its backoff (a retry is the next round), a
        fatal one (INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED) stops that transaction's markers and
        leaves it in PrepareCommit/PrepareAbort."""
        from toolkit.names import error_of

        self._faults.fail_markers(error_of(error), count, transactional_id)

    @control("POST", "/faults/markers/delay", answer=_delayed_markers)
    def delay_markers(self, delay_ms: int, count: Count | None = None, *, transactional_id: str | None = None) -> None:
        """Hold transaction markers back.

        The next `count` rounds of markers (all of them when None; optionally only one transactional id's) are
        written `delay_ms` later on the broker clock (with frozen time: once `advance` passes it), so the
        transaction stays in PrepareCommit/PrepareAbort and read_committed readers wait at the last stable offset
        meanwhile."""
        self._faults.delay_markers(delay_ms, count, transactional_id)

    # -- transactions --------------------------------------------------------------------------------------------

    @control("GET", "/transactions", answer=_transactions)
    def transactions(self) -> list[dict[str, Any]]:
        """Every transactional id, as `transaction` shows it."""
        from toolkit.transactions import transaction_snapshots

        broker = self._broker
        return transaction_snapshots(broker.transactions.coordinator, self._markers.held(), broker.clock)

    @control("GET", "/transactions/{id}", answer=_transaction)
    def transaction(self, transactional_id: str) -> dict[str, Any] | None:
        """One transactional id, as the transaction coordinator sees it.

        State (and a transition being written), producer id and epoch, timeout, start time, partitions, the
        markers not yet written and those a fault holds back, and for an Ongoing transaction when its timeout
        runs out and when the coordinator next looks for timed-out transactions; None when the broker has no
        such id."""
        from toolkit.transactions import transaction_snapshot

        broker = self._broker
        held = self._markers.held(transactional_id)
        return transaction_snapshot(broker.transactions.coordinator, transactional_id, held, broker.clock)

    @control("POST", "/transactions/{id}/expire", answer=_expired_transaction)
    def expire_transaction(self, transactional_id: str) -> bool:
        """The transaction times out now.

        Kafka's own timeout path: the producer is fenced (epoch + 1) and the transaction aborted with that epoch
        (PrepareAbort, ABORT markers, CompleteAbort), so the producer's next request fails as a fenced one does.
        False when the id has no Ongoing transaction (or a transition is being written)."""
        clock = self._broker.clock
        done = self._broker.transactions.coordinator.abort_now(transactional_id, clock.monotonic_ms(), clock.wall_ms())
        self._broker.rearm_timers()
        return done

    # -- groups --------------------------------------------------------------------------------------------------

    @control("GET", "/groups/{id}", answer=_group)
    def group(self, group_id: str) -> dict[str, Any] | None:
        """One group, as the coordinator sees it.

        State, generation, protocol, leader, members, and which members the current rebalance still waits for
        with their session deadlines; None when the broker has no such group. A consumer group (KIP-848) also
        answers its group and assignment epochs and, per member, its epoch, state, assigned, pending-revocation
        and target partitions; its `waiting_for` says who must revoke and who waits for whose partitions."""
        coordinator = self._broker.coordinator
        if coordinator.consumer_group(group_id) is not None:
            from toolkit.consumer_groups import consumer_group_snapshot

            return consumer_group_snapshot(coordinator, group_id)
        group = coordinator.group(group_id)
        if group is None:
            return None
        members = coordinator.member_views(group_id)
        return {
            "group_id": group_id,
            "group_type": "classic",
            "state": group.state.value,
            "generation": group.generation_id,
            "protocol_type": group.protocol_type,
            "protocol": group.protocol_name,
            "leader": group.leader_id,
            "members": [m.member_id for m in members],
            "waiting_for": coordinator.waiting_for(group_id),
            "member_details": [
                {
                    "member_id": m.member_id,
                    "group_instance_id": m.group_instance_id,
                    "client_id": m.client_id,
                    "client_host": m.client_host,
                    "awaiting_join": m.awaiting_join,
                    "awaiting_sync": m.awaiting_sync,
                    "session_deadline_ms": m.session_deadline_ms,
                }
                for m in members
            ],
        }

    @control("POST", "/groups/{id}/members/{member}/expire", answer=_expired)
    def expire_member(self, group_id: str, member_id: str) -> bool:
        """The member's session expires now.

        Kafka's own session-expiry path (a consumer-group member is fenced, the group epoch bumped and the new
        target computed, as Kafka 4.4 does); False when there is no such group or member."""
        coordinator = self._broker.coordinator
        if coordinator.consumer_group(group_id) is not None:
            done = coordinator.expire_consumer_member_now(group_id, member_id, self._now())
        else:
            done = coordinator.expire_member_now(group_id, member_id, self._now())
        self._broker.rearm_timers()
        return done

    @control(
        "POST",
        "/groups/{id}/rebalance",
        answer=_rebalancing,
        http_defaults={"reason": "forced through the control API"},
    )
    def force_rebalance(self, group_id: str, reason: str = "forced by test") -> bool:
        """Start a rebalance now.

        False when the group cannot rebalance now (it needs members and to be Stable or CompletingRebalance)."""
        done = self._broker.coordinator.force_rebalance(group_id, self._now(), reason)
        self._broker.rearm_timers()
        return done

    @control(
        "POST",
        "/groups/{id}/target-assignment",
        answer=_new_target,
        http_defaults={"reason": "forced through the control API"},
    )
    def force_target_assignment(self, group_id: str, reason: str = "forced by test") -> bool:
        """A consumer group computes a new target assignment.

        Bumps the group epoch (a ConsumerGroupMetadata record), so the next heartbeat of any member computes a
        new target assignment; False when there is no such consumer group or it has no members."""
        done = self._broker.coordinator.force_target_assignment(group_id, self._now(), reason)
        self._broker.rearm_timers()
        return done

    @control("POST", "/groups/{id}/move-coordinator", answer=_result("partition"))
    def move_coordinator(self, group_id: str) -> int:
        """NOT_COORDINATOR until clients look the coordinator up again.

        The group's coordinator moves away: its requests get NOT_COORDINATOR until a client looks the coordinator
        up again (FindCoordinator), which finds it loaded afresh from `__consumer_offsets`. Returns the partition."""
        return self._moves.move(group_id)

    # -- the nodes of a several-node cluster (`cluster.nodes`) ------------------------------------------------------

    @control("GET", "/nodes", answer=_result("nodes"))
    def nodes(self) -> list[dict[str, Any]]:
        """Every node: its id, address, whether it runs, and how many partitions it leads."""
        broker = self._broker
        cluster = broker.cluster
        led: dict[int, int] = {}
        for info in broker.logs.topics():
            for index in range(info.partitions):
                leader = cluster.leader_id(info.name, index)
                led[leader] = led.get(leader, 0) + 1
        return [
            {
                "node_id": node_id,
                "port": broker.node_ports(index)[0],
                "running": node_id not in broker.nodes.stopped,
                "leads": led.get(node_id, 0),
                "controller": node_id == cluster.controller_id,
            }
            for index, node_id in enumerate(cluster.node_ids)
        ]

    @control("POST", "/nodes/{id}/stop", answer=_leader_changes)
    def stop_node(self, node_id: int) -> list[dict[str, Any]]:
        """Stop a node: connections drop, its partitions and coordinators move.

        Its listeners close and its connections drop; every partition it led elects another in-sync replica (leader
        epoch + 1), and its `__consumer_offsets` and `__transaction_state` partitions load on their new leaders
        (COORDINATOR_LOAD_IN_PROGRESS meanwhile). Returns the leader changes. `ValueError` for an unknown node or
        the last running one."""
        changes = self._broker.nodes.stop(node_id)
        self._broker.rearm_timers()
        return [_change(change) for change in changes]

    @control("POST", "/nodes/{id}/start", answer=_leader_changes)
    def start_node(self, node_id: int) -> list[dict[str, Any]]:
        """Start a stopped node again, on the same ports.

        It is in sync again and leads the partitions that had no leader; the others keep theirs until a
        `move_leader`. Returns the leader changes."""
        changes = self._broker.nodes.start(node_id)
        self._broker.rearm_timers()
        return [_change(change) for change in changes]

    @control("POST", "/topics/{topic}/partitions/{partition}/leader", answer=_leader_changes)
    def move_leader(self, topic: str, partition: int, node_id: int) -> list[dict[str, Any]]:
        """Move one partition's leadership to a node.

        The node must be a running in-sync replica (`ValueError` otherwise); the leader epoch is bumped, and for a
        coordinator topic's partition its groups or transactional ids load on that node. Returns the change (none
        when it led already)."""
        change = self._broker.nodes.move_leader(topic, partition, node_id)
        self._broker.rearm_timers()
        return [] if change is None else [_change(change)]

    @control("POST", "/nodes/{id}/partition", answer=_partitioned)
    def partition_node(self, node_id: int, client_id: str) -> bool:
        """Partition a node from one client: its requests time out.

        The node keeps running and serving every other client, and the client keeps reaching every other node; the
        node reads the client's requests (those with this client id) and holds them unanswered, as a network
        partition looks to the client: its requests time out, and it looks elsewhere. Until `heal_partitions`.
        False when that node was already cut off from that client; `ValueError` for an unknown node."""
        self._broker.nodes.check(node_id)
        if not client_id:
            raise ValueError("client_id is required: the client id whose requests the node holds")
        return self._partitions.cut(node_id, client_id)

    @control("GET", "/nodes/partitions", answer=_result("partitions"))
    def node_partitions(self) -> list[dict[str, Any]]:
        """The node partitions in force.

        Each with its `node_id`, `client_id`, the requests it `held` now and `held_total` since it began (a test
        waits for `held` to see that the client's request reached the node and is being held)."""
        return self._partitions.in_force()

    @control("POST", "/nodes/partitions/heal", answer=_healed)
    def heal_partitions(self, node_id: int | None = None, client_id: str | None = None) -> list[dict[str, Any]]:
        """End node partitions: held requests are served.

        The partitions of one node and/or one client id (every one by default) end: the requests held are answered
        in order, on connections the client has not closed meanwhile, and new ones are served at once. Returns the
        partitions ended, each with how many requests it held in all (`held_total`)."""
        return [
            {"node_id": cut.node_id, "client_id": cut.client_id, "held_total": cut.held_total}
            for cut in self._partitions.heal(node_id, client_id)
        ]

    @control("GET", "/groups/{id}/coordinator", answer=_result("node_id"))
    def coordinator_node(self, group_id: str) -> int:
        """The node coordinating a group (-1 while none leads its partition).

        The leader of the group's `__consumer_offsets` partition, which FindCoordinator names."""
        partition = self._broker.coordinator.partition_for(group_id)
        return self._broker.cluster.leader_id("__consumer_offsets", partition)

    @control("GET", "/transactions/{id}/coordinator", answer=_result("node_id"))
    def transaction_coordinator_node(self, transactional_id: str) -> int:
        """The node coordinating a transactional id (-1 while none leads its partition).

        The leader of the id's `__transaction_state` partition, which FindCoordinator names; `move_leader` on that
        partition moves it."""
        partition = self._broker.transactions.coordinator.partition_for(transactional_id)
        return self._broker.cluster.leader_id("__transaction_state", partition)

    @control("POST", "/groups/{id}/coordinator", answer=_leader_changes)
    def move_group_coordinator(self, group_id: str, node_id: int) -> list[dict[str, Any]]:
        """Move a group's coordinator to a node.

        The leadership of the group's `__consumer_offsets` partition moves (`move_leader`): the old node answers
        NOT_COORDINATOR, the new one loads the partition from the log. Returns the change."""
        partition = self._broker.coordinator.partition_for(group_id)
        return self.move_leader("__consumer_offsets", partition, node_id)

    @control("POST", "/groups/{id}/loading", answer=_loading)
    def load_partition_for(self, group_id: str, duration_ms: int) -> int:
        """COORDINATOR_LOAD_IN_PROGRESS for a while.

        The group's `__consumer_offsets` partition is unloaded and loads again after `duration_ms`; returns it."""
        return self._moves.load_for(group_id, duration_ms)
