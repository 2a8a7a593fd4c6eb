"""Structured events: one snake_case fact per state change, with ids as key/values (architecture.md 4.6).

Every change a coordinator makes to a group is visible as an event, so a rebalance can be reconstructed from the
log alone: who joined, who was expired and why, when a rebalance started (and why) and when it completed (with
generation, leader, protocol, members and duration), what was committed or expired. Events go to a structlog
logger (`structlog.get_logger("group_coordinator")` unless one is injected); the broker decides rendering and
levels. Tests inject a recorder. Nothing is logged on the heartbeat fast path.
"""

from __future__ import annotations

from typing import Any, Protocol

import structlog


class EventLogger(Protocol):
    """The part of a structlog logger the coordinator uses."""

    def info(self, event: str, **kw: Any) -> Any: ...

    def warning(self, event: str, **kw: Any) -> Any: ...

    def debug(self, event: str, **kw: Any) -> Any: ...


class Events:
    """The catalogue of coordinator events; each method is one event name."""

    __slots__ = ("_log",)

    def __init__(self, logger: EventLogger | None = None) -> None:
        self._log: EventLogger = logger if logger is not None else structlog.get_logger("group_coordinator")

    # -- groups ----------------------------------------------------------------------------------------------

    def group_created(self, group_id: str, partition: int, reason: str) -> None:
        self._log.info("group.created", group=group_id, partition=partition, reason=reason)

    def group_state_changed(self, group_id: str, old: str, new: str, generation_id: int) -> None:
        self._log.info("group.state", group=group_id, old_state=old, new_state=new, generation=generation_id)

    def group_conversion_skipped(self, group_id: str, to_type: str, reason: str) -> None:
        """KIP-848 online migration: a group that could change type stays as it is (Kafka logs the same)."""
        self._log.info("group.conversion_skipped", group=group_id, to_type=to_type, reason=reason)

    def group_deleted(self, group_id: str, reason: str) -> None:
        self._log.info("group.deleted", group=group_id, reason=reason)

    def group_loaded(self, group_id: str, state: str, generation_id: int, members: int, offsets: int) -> None:
        self._log.info(
            "group.loaded",
            group=group_id,
            state=state,
            generation=generation_id,
            members=members,
            offsets=offsets,
        )

    def group_unloaded(self, group_id: str, state: str, generation_id: int) -> None:
        self._log.info("group.unloaded", group=group_id, state=state, generation=generation_id)

    # -- members ---------------------------------------------------------------------------------------------

    def member_joined(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        client_id: str,
        client_host: str,
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
        protocols: list[str],
    ) -> None:
        self._log.info(
            "member.joined",
            group=group_id,
            member=member_id,
            group_instance_id=group_instance_id,
            client_id=client_id,
            client_host=client_host,
            session_timeout_ms=session_timeout_ms,
            rebalance_timeout_ms=rebalance_timeout_ms,
            protocols=protocols,
        )

    def member_id_required(self, group_id: str, member_id: str, client_id: str) -> None:
        self._log.info("member.id_required", group=group_id, member=member_id, client_id=client_id)

    def member_left(self, group_id: str, member_id: str, group_instance_id: str | None, reason: str) -> None:
        self._log.info(
            "member.left", group=group_id, member=member_id, group_instance_id=group_instance_id, reason=reason
        )

    def member_expired(self, group_id: str, member_id: str, group_instance_id: str | None, reason: str) -> None:
        self._log.info(
            "member.expired", group=group_id, member=member_id, group_instance_id=group_instance_id, reason=reason
        )

    def member_fenced(self, group_id: str, group_instance_id: str, old_member_id: str, new_member_id: str) -> None:
        self._log.info(
            "member.fenced",
            group=group_id,
            group_instance_id=group_instance_id,
            old_member_id=old_member_id,
            new_member_id=new_member_id,
        )

    def member_rejected(self, group_id: str, member_id: str, reason: str) -> None:
        self._log.info("member.rejected", group=group_id, member=member_id, reason=reason)

    # -- consumer groups (KIP-848) -----------------------------------------------------------------------------

    def consumer_member_joined(
        self,
        group_id: str,
        member_id: str,
        instance_id: str | None,
        client_id: str,
        client_host: str,
        rebalance_timeout_ms: int,
        subscription: list[str] | str,
    ) -> None:
        self._log.info(
            "member.joined",
            group=group_id,
            group_type="consumer",
            member=member_id,
            group_instance_id=instance_id,
            client_id=client_id,
            client_host=client_host,
            rebalance_timeout_ms=rebalance_timeout_ms,
            subscription=subscription,
        )

    def group_epoch_bumped(self, group_id: str, epoch: int, reason: str) -> None:
        self._log.info("group.epoch", group=group_id, group_epoch=epoch, reason=reason)

    def target_assignment_computed(self, group_id: str, epoch: int, assignor: str, members: int, changed: int) -> None:
        self._log.info(
            "assignment.target",
            group=group_id,
            assignment_epoch=epoch,
            assignor=assignor,
            members=members,
            members_changed=changed,
        )

    def member_reconciled(
        self, group_id: str, member_id: str, epoch: int, state: str, assigned: int, revoking: int, unreleased: int
    ) -> None:
        self._log.info(
            "member.reconciled",
            group=group_id,
            member=member_id,
            member_epoch=epoch,
            member_state=state,
            assigned=assigned,
            pending_revocation=revoking,
            unreleased=unreleased,
        )

    # -- rebalances ------------------------------------------------------------------------------------------

    def rebalance_started(self, group_id: str, generation_id: int, reason: str, members: int) -> None:
        self._log.info("rebalance.started", group=group_id, generation=generation_id, reason=reason, members=members)

    def join_completed(
        self, group_id: str, generation_id: int, leader_id: str | None, protocol: str | None, members: list[str]
    ) -> None:
        self._log.info(
            "rebalance.join_completed",
            group=group_id,
            generation=generation_id,
            leader=leader_id,
            protocol=protocol,
            members=members,
        )

    def rebalance_completed(
        self,
        group_id: str,
        generation_id: int,
        leader_id: str | None,
        protocol: str | None,
        members: list[str],
        duration_ms: int,
    ) -> None:
        self._log.info(
            "rebalance.completed",
            group=group_id,
            generation=generation_id,
            leader=leader_id,
            protocol=protocol,
            members=members,
            duration_ms=duration_ms,
        )

    # -- offsets ---------------------------------------------------------------------------------------------

    def offsets_committed(self, group_id: str, member_id: str, generation_id: int, partitions: int) -> None:
        self._log.info(
            "offsets.committed",
            group=group_id,
            member=member_id,
            generation=generation_id,
            partitions=partitions,
        )

    def offsets_expired(self, group_id: str, partitions: list[tuple[str, int]]) -> None:
        self._log.info("offsets.expired", group=group_id, partitions=partitions)

    def offsets_deleted(self, group_id: str, partitions: list[tuple[str, int]]) -> None:
        self._log.info("offsets.deleted", group=group_id, partitions=partitions)

    def txn_offsets_pending(
        self, group_id: str, transactional_id: str, producer_id: int, producer_epoch: int, partitions: int
    ) -> None:
        """A TxnOffsetCommit is durable: its offsets wait for the producer's marker (T62)."""
        self._log.info(
            "offsets.txn_pending",
            group=group_id,
            transactional_id=transactional_id,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            partitions=partitions,
        )

    def txn_offsets_completed(
        self, group_id: str, producer_id: int, result: str, committed: int, superseded: int, dropped: int
    ) -> None:
        """A marker settled a producer's pending offsets of one group (T64); `superseded` were committed by the
        transaction but an offset written later in the log stays."""
        self._log.info(
            "offsets.txn_completed",
            group=group_id,
            producer_id=producer_id,
            result=result,
            committed=committed,
            superseded=superseded,
            dropped=dropped,
        )

    def txn_marker_without_offsets(self, partition: int, producer_id: int, result: str) -> None:
        """A marker for a producer with nothing pending on the partition (Kafka logs and ignores it, T64)."""
        self._log.debug("offsets.txn_marker_ignored", partition=partition, producer_id=producer_id, result=result)

    # -- partitions and storage ------------------------------------------------------------------------------

    def partition_loading(self, partition: int) -> None:
        self._log.debug("partition.loading", partition=partition)

    def partition_loaded(self, partition: int, groups: int, records: int, skipped: int) -> None:
        level = self._log.info if groups else self._log.debug  # 50 empty partitions load at every start
        level("partition.loaded", partition=partition, groups=groups, records=records, skipped=skipped)

    def partition_load_failed(self, partition: int, reason: str) -> None:
        self._log.warning("partition.load_failed", partition=partition, reason=reason)

    def partition_reload(self, partition: int, reason: str) -> None:
        self._log.warning("partition.reload", partition=partition, reason=reason)

    def partition_unloaded(self, partition: int, groups: int) -> None:
        level = self._log.info if groups else self._log.debug
        level("partition.unloaded", partition=partition, groups=groups)

    def record_skipped(self, partition: int, key_version: int, reason: str) -> None:
        self._log.warning("partition.record_skipped", partition=partition, key_version=key_version, reason=reason)

    def append_failed(self, partition: int, purpose: str, error: str) -> None:
        self._log.warning("offsets_log.append_failed", partition=partition, purpose=purpose, error=error)
