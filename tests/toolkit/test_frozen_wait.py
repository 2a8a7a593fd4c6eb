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
