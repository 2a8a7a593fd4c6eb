"""The classic consumer-group coordinator: a synchronous, sans-IO state machine faithful to Kafka.

Entry point: `GroupCoordinator` (coordinator.py). Specification: ../shared/design/group-protocol.md.
"""

from coordinator.clock import ManualClock
from coordinator.config import CoordinatorConfig
from coordinator.context import RequestContext
from coordinator.coordinator import GroupCoordinator
from coordinator.events import Events
from coordinator.hashing import partition_for
from coordinator.persistence import InMemoryRecordStore, RecordLog
from coordinator.records import CoordinatorRecord, UnknownRecordKey
from coordinator.reply import Reply
from coordinator.routing import Node, find_coordinator
from coordinator.state import GroupState

__all__ = [
    "CoordinatorConfig",
    "CoordinatorRecord",
    "Events",
    "GroupCoordinator",
    "GroupState",
    "InMemoryRecordStore",
    "ManualClock",
    "Node",
    "RecordLog",
    "Reply",
    "RequestContext",
    "UnknownRecordKey",
    "find_coordinator",
    "partition_for",
]
