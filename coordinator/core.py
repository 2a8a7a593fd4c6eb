"""Compatibility names: the timer keys moved to `coordinator.keys` when the coordinator became composed."""

from coordinator.keys import RETENTION_KEY, append_key, heartbeat_key, join_key, sync_key

__all__ = ["RETENTION_KEY", "append_key", "heartbeat_key", "join_key", "sync_key"]
