"""The pieces of the frozen-time rule at the lowest level: the error's sentence and the per-group request count."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from protocol.messages.find_coordinator import FindCoordinatorRequest
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.messages.metadata import MetadataRequest
from protocol.registry import ApiKey
from toolkit.frozen_wait import FrozenWait, PendingTimer
from toolkit.group_activity import GroupActivity


def test_the_frozen_wait_names_the_group_its_timers_in_order_and_the_next_advance() -> None:
    wait = FrozenWait(
        "billing",
        "CompletingRebalance",
        3,
        (PendingTimer("session of member m-1", 45_000), PendingTimer("sync timeout", 30_000)),
        exact=False,
        fingerprint=(),
    )
    assert wait.next_advance_ms == 30_000
    assert wait.describe() == (
        "time is frozen: group 'billing' (CompletingRebalance, generation 3) waits for a timer due at +30000 ms "
        "virtual; call advance(30000) (or unfreeze_time()). Pending timers: sync timeout due at +30000 ms, "
        "session of member m-1 due at +45000 ms"
    )


def test_the_frozen_wait_of_a_consumer_group_names_its_epochs_and_what_reconciliation_waits_for() -> None:
    wait = FrozenWait(
        "billing",
        "Reconciling",
        2,
        (PendingTimer("session of member m2", 45_000), PendingTimer("revocation timeout of member m1", 30_000)),
        exact=False,
        fingerprint=(),
        assignment_epoch=2,
        waits=(
            "waiting for member m1 to revoke partitions orders-2,orders-3",
            "member m2 waits for partitions orders-2,orders-3 held by m1",
        ),
    )
    assert wait.describe() == (
        "time is frozen: group 'billing' (Reconciling, group epoch 2, assignment epoch 2) waits for a timer due at "
        "+30000 ms virtual; call advance(30000) (or unfreeze_time()). Pending timers: revocation timeout of member "
        "m1 due at +30000 ms, session of member m2 due at +45000 ms. Reconciliation: waiting for member m1 to revoke "
        "partitions orders-2,orders-3; member m2 waits for partitions orders-2,orders-3 held by m1"
    )


def test_group_activity_counts_the_requests_naming_each_group() -> None:
    activity = GroupActivity()
    ctx: Any = SimpleNamespace()
    seen = [
        (ApiKey.HEARTBEAT, HeartbeatRequest(group_id="a", generation_id=1, member_id="m")),
        (ApiKey.FIND_COORDINATOR, FindCoordinatorRequest(key="a")),
        (ApiKey.FIND_COORDINATOR, FindCoordinatorRequest(coordinator_keys=["a", "b"])),
        (ApiKey.METADATA, MetadataRequest()),
    ]
    for api_key, request in seen:
        activity.request_started(ctx, api_key, request)
    assert (activity.requests("a"), activity.requests("b"), activity.requests("c")) == (3, 1, 0)


class _Timers:
    def __init__(self, deadlines: dict[Any, int]) -> None:
        self._deadlines = deadlines

    def deadline(self, key: Any) -> int | None:
        return self._deadlines.get(key)


def _controls_over(deadlines: dict[Any, int], now: int) -> Any:
    """BrokerControls over a frozen clock and a group in PreparingRebalance whose only member has joined."""
    from coordinator.state import GroupState
    from toolkit.controls import BrokerControls

    group = SimpleNamespace(
        members={"m-1": object()},
        pending_members=set(),
        pending_sync_members=set(),
        state=GroupState.PREPARING_REBALANCE,
        generation_id=0,
        num_awaiting_join=1,
        is_in=lambda state: state is GroupState.PREPARING_REBALANCE,
        has_all_members_joined=lambda: True,
    )
    coordinator = SimpleNamespace(
        group=lambda group_id: group, consumer_group=lambda group_id: None, timer=_Timers(deadlines)
    )
    broker = SimpleNamespace(clock=SimpleNamespace(frozen=True, monotonic_ms=lambda: now), coordinator=coordinator)
    nothing: Any = None  # the controls these tests call use none of the toolkit's fault parts
    return BrokerControls(broker, nothing, nothing, GroupActivity(), nothing, nothing)


def test_a_timer_due_now_is_not_a_frozen_wait() -> None:
    """Initial delay 0 under frozen time: the join timer is due at the frozen instant and fires on the loop's next
    turn, so a wait that looks in that moment must not fail (a session timer further out does not change that)."""
    from coordinator.keys import heartbeat_key, join_key

    due_now = {join_key("g"): 1_000, heartbeat_key("g", "m-1"): 301_000}
    assert _controls_over(due_now, now=1_000).frozen_timer_blocking("g") is None
    later = {join_key("g"): 4_000, heartbeat_key("g", "m-1"): 301_000}
    blocked = _controls_over(later, now=1_000).frozen_timer_blocking("g")
    assert blocked is not None and blocked.exact and blocked.next_advance_ms == 3_000
