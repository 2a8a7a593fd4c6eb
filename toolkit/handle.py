"""What a test holds of an embedded broker: its address, virtual time, faults, groups and the recorder.

Every call is marshalled onto the broker's own loop. Imports of the server stay out of module import time, so the
pytest plugin that re-exports this stays a leaf.

The controls (`advance`, `inject_error`, `expire_member`, ...) are not written here: each is declared once, on
`BrokerControls` (`toolkit/controls.py`), and `_relay_controls` gives the handle one method per declared control
at class creation, with the control's own signature and docstring (`help()`, `inspect.signature` and IDEs see
them), which runs it on the broker's loop. For the type checker the handle is the controls (the `_Controls` base
exists only under TYPE_CHECKING), so a test calling `handle.advance("10")` fails `mypy` as it would on
`BrokerControls` itself. Why not a Protocol that both sides implement: the signatures would then be written twice
and kept in step by a test; this way there is nothing to keep in step.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from toolkit.control_spec import declared_controls
from toolkit.controls import BrokerControls

if TYPE_CHECKING:
    from toolkit.embedded import EmbeddedBroker
    from toolkit.recorder import Exchange
    from toolkit.security import ClientSettings

    _Controls = BrokerControls
else:
    _Controls = object

H = TypeVar("H", bound=type)

FROZEN_GRACE_S = 5.0
"""Real seconds a group must stand still under frozen time before a wait on it gives up (above the 3 s default
`heartbeat.interval.ms` of Kafka clients, so a live member always shows up within it)."""


class GroupNotReadyError(AssertionError):
    """`wait_for_group` timed out, or waits on frozen time; the message shows the group as it was."""


class TransactionNotReadyError(AssertionError):
    """`wait_for_transaction` timed out; the message shows the transaction as it was."""


class FrozenTimeError(GroupNotReadyError):
    """`wait_for_group` gave up before its timeout: time is frozen and only an `advance` can move the group on.

    A `GroupNotReadyError` (code catching that keeps working); the message names the group, its state, its pending
    timers and the `advance(ms)` that fires the next one."""


def _relay(name: str, declared: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(declared)
    def relay(self: GroupBrokerHandle, *args: Any, **kwargs: Any) -> Any:
        controls = self._controls
        return self._embedded.call(lambda: getattr(controls, name)(*args, **kwargs))

    return relay


def _relay_controls(cls: H) -> H:
    """Give the handle one method per control declared on `BrokerControls`, run on the broker's loop."""
    for spec in declared_controls(BrokerControls):
        setattr(cls, spec.name, _relay(spec.name, getattr(BrokerControls, spec.name)))
    return cls


@_relay_controls
class GroupBrokerHandle(_Controls):
    """What a test holds: the address, virtual time, fault injection, group inspection and the recorder.

    Every control of `BrokerControls` is a method of the handle, with the same signature (see the module doc)."""

    def __init__(self, embedded: EmbeddedBroker) -> None:
        self._embedded = embedded
        self._controls = embedded.kit.controls

    @property
    def bootstrap_servers(self) -> str:
        return self._embedded.bootstrap_servers

    @property
    def data_dir(self) -> str:
        return str(self._embedded.data_dir)

    @property
    def client_settings(self) -> ClientSettings:
        """How clients reach this broker (its security protocol, the test CA and client certificate), spelled for
        each client family: `.kafka_python()`, `.aiokafka()`, `.confluent()`, `.kafkajs()`, `.ssl_context()`, and
        the `.principal` the broker gives such a client."""
        return self._embedded.client_settings

    def _matches(self, group_id: str, state: str | None, members: int | None, generation_at_least: int | None) -> Any:
        snapshot = self.group(group_id)
        if snapshot is None:
            return None, None
        ok = (
            (state is None or snapshot["state"] == state)
            and (members is None or len(snapshot["members"]) == members)
            and (generation_at_least is None or snapshot["generation"] >= generation_at_least)
        )
        return ok, snapshot

    async def wait_for_group(
        self,
        group_id: str,
        *,
        state: str | None = None,
        members: int | None = None,
        generation_at_least: int | None = None,
        timeout_s: float = 15.0,
        frozen_grace_s: float = FROZEN_GRACE_S,
    ) -> dict[str, Any]:
        """Wait (without blocking the caller's event loop) until the group matches; returns its snapshot.

        Raises `GroupNotReadyError` after `timeout_s`. With time frozen it raises `FrozenTimeError` (a
        `GroupNotReadyError`) as soon as only an `advance` could get the group there, naming the group, its state,
        its pending timers and the `advance(ms)` that fires the next one; see `wait_for_group_blocking` for the
        rule and `frozen_grace_s`."""
        import asyncio  # here, not at import time: the plugin module stays a leaf

        snapshot: dict[str, Any] = await asyncio.to_thread(
            self.wait_for_group_blocking,
            group_id,
            state=state,
            members=members,
            generation_at_least=generation_at_least,
            timeout_s=timeout_s,
            frozen_grace_s=frozen_grace_s,
        )
        return snapshot

    def wait_for_group_blocking(
        self,
        group_id: str,
        *,
        state: str | None = None,
        members: int | None = None,
        generation_at_least: int | None = None,
        timeout_s: float = 15.0,
        frozen_grace_s: float = FROZEN_GRACE_S,
    ) -> dict[str, Any]:
        """`wait_for_group` for blocking tests.

        The frozen-time rule: while the group does not match, time is frozen and the group has coordinator timers
        pending (join/rebalance, sync, member sessions) that could get it there, the wait raises `FrozenTimeError`

        - at once when every member is parked in its JoinGroup (PreparingRebalance, all joined): no client can
          complete that join, only its timer;
        - otherwise once the group has stood still for `frozen_grace_s` of real time: the same state, generation,
          members, pending joins and syncs, and no request naming the group (Heartbeat, JoinGroup, SyncGroup,
          LeaveGroup, OffsetCommit, FindCoordinator, ...) in that time.

        Why this cannot fail a wait a live client would still satisfy: a live member of a group talks to it at
        least every `heartbeat.interval.ms` of real time (3 s by default in every Kafka client; frozen broker time
        does not slow clients down), which resets the grace (5 s by default); a client on its way in sends
        FindCoordinator or JoinGroup naming the group. A wait for more members than the group has never fails
        fast (timers only remove members). Pass a larger `frozen_grace_s` for clients that heartbeat less often.

        Consumer groups (KIP-848) wait the same way: `state="Stable"` means every member has reconciled at the
        assignment epoch, `generation_at_least` compares the group epoch. Their timers are the members' sessions
        and revocation timeouts, the error also says what the reconciliation waits for ("waiting for member X to
        revoke partitions Y", "member X waits for partitions Y held by Z"), and the grace is at least 1.5
        `group.consumer.heartbeat.interval.ms`, how often those members talk."""
        deadline = time.monotonic() + timeout_s
        controls = self._controls
        fingerprint: object = None
        quiet_since = 0.0
        while True:
            ok, snapshot = self._matches(group_id, state, members, generation_at_least)
            if ok:
                return dict(snapshot)
            now = time.monotonic()
            blocked = self._embedded.call(lambda: controls.frozen_timer_blocking(group_id, members))
            if blocked is None:
                fingerprint = None
            elif blocked.fingerprint != fingerprint:
                fingerprint, quiet_since = blocked.fingerprint, now
            if blocked is not None and (blocked.exact or now - quiet_since >= max(frozen_grace_s, blocked.min_grace_s)):
                raise FrozenTimeError(f"{blocked.describe()}. Group: {snapshot}")
            if now > deadline:
                raise GroupNotReadyError(f"group {group_id!r} not as expected within {timeout_s}s: {snapshot}")
            time.sleep(0.02)

    # -- transactions --------------------------------------------------------------------------------------------

    async def wait_for_transaction(
        self, transactional_id: str, *, state: str | None = None, timeout_s: float = 15.0
    ) -> dict[str, Any]:
        """Wait (without blocking the caller's event loop) until the transactional id is in `state` (known at all
        when None); returns its snapshot (`transaction`)."""
        import asyncio  # here, not at import time: the plugin module stays a leaf

        snapshot: dict[str, Any] = await asyncio.to_thread(
            self.wait_for_transaction_blocking, transactional_id, state=state, timeout_s=timeout_s
        )
        return snapshot

    def wait_for_transaction_blocking(
        self, transactional_id: str, *, state: str | None = None, timeout_s: float = 15.0
    ) -> dict[str, Any]:
        """`wait_for_transaction` for blocking tests.

        A state is the one written to `__transaction_state` (a transition being written shows as `pending_state`).
        Markers are written and records become durable on the broker's next loop turns, so a transaction reaches
        CompleteCommit/CompleteAbort shortly after the EndTxn, timeout or `advance` that decided it; this waits for
        that. Raises `TransactionNotReadyError` after `timeout_s`, showing the
        transaction as it was (a marker fault holding it back, a retry waiting for `advance` under frozen time)."""
        deadline = time.monotonic() + timeout_s
        while True:
            snapshot = self.transaction(transactional_id)
            if snapshot is not None and (state is None or snapshot["state"] == state):
                return snapshot
            if time.monotonic() > deadline:
                raise TransactionNotReadyError(
                    f"transactional id {transactional_id!r} not {state or 'known'} within {timeout_s}s: {snapshot}"
                )
            time.sleep(0.02)

    def group_timeline(self, group_id: str, *, heartbeats: bool = True) -> dict[str, Any] | None:
        """The group's rebalance timeline as JSON (what `GET /groups/{id}/timeline?format=json` answers): its live
        state, lanes, rebalances and every event with the principal and listener of the request behind it."""
        kit = self._embedded.kit
        view: dict[str, Any] | None = self._embedded.call(
            lambda: kit.group_timeline_view(group_id, heartbeats=heartbeats)
        )
        return view

    def transaction_timeline(self, transactional_id: str) -> dict[str, Any] | None:
        """The id's transaction timeline as JSON (what `GET /transactions/{id}/timeline?format=json` answers):
        its live state, its state bands, the partitions involved and every event; None when nothing knows it."""
        kit = self._embedded.kit
        view: dict[str, Any] | None = self._embedded.call(lambda: kit.transaction_timeline_view(transactional_id))
        return view

    # -- recorder ------------------------------------------------------------------------------------------------

    def requests(
        self,
        *,
        api: str | int | None = None,
        client_id: str | None = None,
        group_id: str | None = None,
        principal: str | None = None,
    ) -> list[Exchange]:
        """Every request/response recorded so far (API, version, error codes, decoded bodies, the principal and
        listener that sent it), optionally only those matching each filter given."""
        from toolkit.names import api_key_of

        key = None if api is None else api_key_of(api)
        recorder = self._embedded.kit.recorder
        exchanges: list[Exchange] = self._embedded.call(
            lambda: recorder.exchanges(api=key, client_id=client_id, group_id=group_id, principal=principal)
        )
        return exchanges
