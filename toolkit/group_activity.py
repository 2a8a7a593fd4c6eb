"""How many requests each group has received: what tells a frozen-time wait that a client is still at work.

A request observer (cheap: one dict increment per group request). `wait_for_group` under frozen time gives up only
once a group has been quiet, and "quiet" means this count stood still (see `BrokerControls.frozen_timer_blocking`).
A request counts for a group when it names it: `group_id` (JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
OffsetCommit, OffsetFetch, ...) or a FindCoordinator key (a client on its way to the group).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from broker.context import RequestContext
from protocol.registry import ApiKey


class GroupActivity:
    def __init__(self) -> None:
        self._requests: Counter[str] = Counter()

    def requests(self, group_id: str) -> int:
        """How many requests named this group so far."""
        return self._requests[group_id]

    def observes(self, api_key: int) -> tuple[bool, bool]:
        """Counted when a request arrives; its end does not matter."""
        return True, False

    def request_started(self, ctx: RequestContext, api_key: int, request: Any) -> None:
        group_id = getattr(request, "group_id", None)
        if isinstance(group_id, str):
            self._requests[group_id] += 1
        elif api_key == ApiKey.FIND_COORDINATOR:
            for key in request.coordinator_keys or [request.key]:
                self._requests[key] += 1

    def request_finished(
        self, ctx: RequestContext, api_key: int, request: Any, response: Any, elapsed_s: float
    ) -> None:
        return
