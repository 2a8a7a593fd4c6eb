"""`GroupCoordinator`: Kafka's classic group coordinator as a synchronous, sans-IO state machine.

How to drive it (the broker's job, sketched in architecture.md 4.4):

* call an API method with the request context, the decoded request dataclass and `now_ms` (monotonic). Reads
  (Heartbeat, LeaveGroup, OffsetFetch, DescribeGroups, ListGroups) return the response; operations that can wait
  (JoinGroup, SyncGroup, OffsetCommit, DeleteGroups, OffsetDelete) return a `Reply`, possibly already completed;
* after every call (and after delivering a storage durability notice) read `next_deadline_ms()` and arrange for
  `tick(now_ms)` to run at that time; `tick` fires every due timer (delayed joins, session expiry, pending-sync
  expiry, the initial rebalance delay, retention, write timeouts);
* own partitions with `begin_loading` / `load_partition` / `unload_partition`; `shutdown` at the end. A load that
  cannot finish leaves its partition FAILED (`fail_loading`, NOT_COORDINATOR), as Kafka's runtime does.

No method does I/O, reads a clock, sleeps, or creates an asyncio object; the same instance runs under the test
harness's manual clock and under the broker's event loop.
"""

from __future__ import annotations

from coordinator.controls import ControlsMixin
from coordinator.join import JoinMixin
from coordinator.membership import MembershipMixin
from coordinator.offset_commit import OffsetCommitMixin
from coordinator.offset_fetch import OffsetFetchMixin
from coordinator.partitions import PartitionsMixin
from coordinator.sync import SyncMixin


class GroupCoordinator(
    JoinMixin,
    SyncMixin,
    MembershipMixin,
    OffsetCommitMixin,
    OffsetFetchMixin,
    PartitionsMixin,
    ControlsMixin,
):
    """The classic group coordinator of one broker node (the partitions of `__consumer_offsets` it leads)."""

    def tick(self, now_ms: int, wall_ms: int | None = None) -> int:
        """Fire every timer due at `now_ms`; returns how many fired. `wall_ms` defaults to an extrapolation
        from the last wall-clock reading the coordinator was given."""
        self._advance(now_ms, wall_ms)
        return self._timer.poll(now_ms)

    def next_deadline_ms(self) -> int | None:
        """When `tick` next has work to do, or None if nothing is scheduled."""
        return self._timer.next_deadline_ms()
