"""The coordinators' configuration, under Kafka's names and with Kafka's defaults (group-protocol.md Part 3).

The broker maps its properties with `CoordinatorConfig.from_kafka_props` (the group coordinator) and
`TransactionConfig.from_kafka_props` (the transaction coordinator, rules T2/T45 of the transaction notes), so an
operator sets `group.initial.rebalance.delay.ms=0` or `transaction.max.timeout.ms=60000` exactly as for Kafka.
Keys a coordinator does not own are ignored (the broker passes its whole property set); a value that is not an
integer, or out of range, is a configuration error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

INT32_MAX = 2**31 - 1

#: Kafka property name -> (field name, multiplier applied to the property's value).
KAFKA_PROPERTIES: dict[str, tuple[str, int]] = {
    "group.min.session.timeout.ms": ("group_min_session_timeout_ms", 1),
    "group.max.session.timeout.ms": ("group_max_session_timeout_ms", 1),
    "group.initial.rebalance.delay.ms": ("group_initial_rebalance_delay_ms", 1),
    "group.max.size": ("group_max_size", 1),
    "offsets.topic.num.partitions": ("offsets_topic_num_partitions", 1),
    "offsets.retention.minutes": ("offsets_retention_ms", 60_000),
    "offsets.retention.check.interval.ms": ("offsets_retention_check_interval_ms", 1),
    "offset.metadata.max.bytes": ("offset_metadata_max_bytes", 1),
    "offsets.commit.timeout.ms": ("offsets_commit_timeout_ms", 1),
    "group.consumer.session.timeout.ms": ("consumer_group_session_timeout_ms", 1),
    "group.consumer.min.session.timeout.ms": ("consumer_group_min_session_timeout_ms", 1),
    "group.consumer.max.session.timeout.ms": ("consumer_group_max_session_timeout_ms", 1),
    "group.consumer.heartbeat.interval.ms": ("consumer_group_heartbeat_interval_ms", 1),
    "group.consumer.min.heartbeat.interval.ms": ("consumer_group_min_heartbeat_interval_ms", 1),
    "group.consumer.max.heartbeat.interval.ms": ("consumer_group_max_heartbeat_interval_ms", 1),
    "group.consumer.max.size": ("consumer_group_max_size", 1),
    "group.consumer.assignment.interval.ms": ("consumer_group_assignment_interval_ms", 1),
    "group.consumer.min.assignment.interval.ms": ("consumer_group_min_assignment_interval_ms", 1),
    "group.consumer.max.assignment.interval.ms": ("consumer_group_max_assignment_interval_ms", 1),
}

#: Kafka list properties (comma-separated) -> field name; the field holds a tuple of lower-case names.
KAFKA_LIST_PROPERTIES: dict[str, str] = {
    "group.consumer.assignors": "consumer_group_assignors",
    "group.coordinator.rebalance.protocols": "rebalance_protocols",
}
#: Kafka string properties -> field name (lower-cased: Kafka validates these case-insensitively).
KAFKA_STRING_PROPERTIES: dict[str, str] = {"group.consumer.migration.policy": "consumer_group_migration_policy"}

#: The transaction coordinator's integer properties -> field name (Kafka's TransactionStateManagerConfig and
#: TransactionLogConfig; every one must be at least 1). It also needs the `__consumer_offsets` partition count to
#: map AddOffsetsToTxn's group onto its partition (T27).
TRANSACTION_KAFKA_PROPERTIES: dict[str, str] = {
    "transaction.state.log.num.partitions": "transaction_state_log_num_partitions",
    "transaction.max.timeout.ms": "transaction_max_timeout_ms",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "abort_timed_out_transactions_interval_ms",
    "transactional.id.expiration.ms": "transactional_id_expiration_ms",
    "transaction.remove.expired.transaction.cleanup.interval.ms": "remove_expired_transactional_ids_interval_ms",
    "offsets.topic.num.partitions": "offsets_topic_num_partitions",
    "transaction.version": "transaction_version",
}

TRANSACTION_VERSION_MAX = 2
"""The highest `transaction.version` feature level Kafka 4.4 supports (and finalizes by default)."""

#: Every property the coordinators read, for the broker to hand over.
ALL_KAFKA_PROPERTIES: tuple[str, ...] = tuple(
    dict.fromkeys((*KAFKA_PROPERTIES, *KAFKA_LIST_PROPERTIES, *KAFKA_STRING_PROPERTIES, *TRANSACTION_KAFKA_PROPERTIES))
)

KNOWN_ASSIGNORS = ("uniform", "range")
"""Kafka's built-in server-side assignors (custom ones are Java classes Kafka would load; not available here)."""
MIGRATION_POLICIES = ("disabled", "upgrade", "downgrade", "bidirectional")
SERVED_PROTOCOLS = ("classic", "consumer")
"""Group protocols this coordinator implements; Kafka also knows `share` and `streams`, refused here."""


class ConfigError(ValueError):
    """A coordinator property has a value Kafka would reject."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CoordinatorConfig:
    """Every knob of the classic group coordinator. Defaults are Kafka's."""

    group_min_session_timeout_ms: int = 6_000
    """Lowest session timeout a JoinGroup may ask for (else INVALID_SESSION_TIMEOUT, rule #6)."""
    group_max_session_timeout_ms: int = 1_800_000
    """Highest session timeout a JoinGroup may ask for."""
    group_initial_rebalance_delay_ms: int = 3_000
    """How long the first rebalance of an Empty group waits for more members (KIP-134, rule #12)."""
    group_max_size: int = INT32_MAX
    """Most members a classic group may have (KIP-389, rule #11)."""
    offsets_topic_num_partitions: int = 50
    """Partitions of `__consumer_offsets`; fixes the group-to-coordinator mapping (rule #1)."""
    offsets_retention_ms: int = 10_080 * 60_000
    """How long committed offsets outlive their group's activity (`offsets.retention.minutes`, KIP-211, #36)."""
    offsets_retention_check_interval_ms: int = 600_000
    """How often the retention sweep runs."""
    offset_metadata_max_bytes: int = 4_096
    """Longest commit metadata string accepted (else OFFSET_METADATA_TOO_LARGE, rule #34)."""
    offsets_commit_timeout_ms: int = 5_000
    """How long a write may take to become durable before the request is answered with a timeout."""
    new_member_join_timeout_ms: int = 300_000
    """Kafka's constant `NewMemberJoinTimeoutMs`: a parked JoinGroup of a brand-new member is dropped after this."""
    consumer_group_session_timeout_ms: int = 45_000
    """KIP-848: how long a consumer-protocol member may go without a heartbeat before it is fenced."""
    consumer_group_min_session_timeout_ms: int = 45_000
    consumer_group_max_session_timeout_ms: int = 60_000
    consumer_group_heartbeat_interval_ms: int = 5_000
    """KIP-848: the interval handed to consumer-protocol members in every ConsumerGroupHeartbeat response."""
    consumer_group_min_heartbeat_interval_ms: int = 5_000
    consumer_group_max_heartbeat_interval_ms: int = 15_000
    consumer_group_assignment_interval_ms: int = 1_000
    """Kafka 4.3+: a group's target assignment is computed at most this often (the first one at once), so a burst
    of joins costs one assignment instead of one per join."""
    consumer_group_min_assignment_interval_ms: int = 0
    consumer_group_max_assignment_interval_ms: int = 15_000
    consumer_group_max_size: int = INT32_MAX
    """KIP-848: most members a consumer group may have (else GROUP_MAX_SIZE_REACHED)."""
    consumer_group_assignors: tuple[str, ...] = ("uniform", "range")
    """`group.consumer.assignors`: the server-side assignors members may name; the first is the default."""
    consumer_group_migration_policy: str = "bidirectional"
    """`group.consumer.migration.policy`: disabled, upgrade, downgrade or bidirectional (KIP-848 online migration)."""
    rebalance_protocols: tuple[str, ...] = ("classic", "consumer")
    """`group.coordinator.rebalance.protocols`: the group protocols this coordinator serves."""
    member_id_seed: int | None = None
    """If set, member ids are drawn from a PRNG seeded with this, so tests and golden files are stable."""

    def __post_init__(self) -> None:
        positive = (
            "group_max_session_timeout_ms",
            "group_max_size",
            "offsets_topic_num_partitions",
            "offsets_retention_ms",
            "offsets_retention_check_interval_ms",
            "offsets_commit_timeout_ms",
            "new_member_join_timeout_ms",
        )
        for name in positive:
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive, got {getattr(self, name)}")
        for name in ("group_min_session_timeout_ms", "group_initial_rebalance_delay_ms", "offset_metadata_max_bytes"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must not be negative, got {getattr(self, name)}")
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms:
            raise ConfigError("group.min.session.timeout.ms must not exceed group.max.session.timeout.ms")
        self._check_consumer_group_settings()

    def _check_consumer_group_settings(self) -> None:
        """Kafka's GroupCoordinatorConfig requirements on the KIP-848 settings, with its wording."""
        for kind, least in (("session.timeout", 1), ("heartbeat.interval", 1), ("assignment.interval", 0)):
            field = kind.replace(".", "_")
            low = getattr(self, f"consumer_group_min_{field}_ms")
            value = getattr(self, f"consumer_group_{field}_ms")
            high = getattr(self, f"consumer_group_max_{field}_ms")
            name = f"group.consumer.{kind}.ms"
            if min(low, value, high) < least:
                raise ConfigError(f"{name} and its min/max bounds must be at least {least}")
            if value < low:
                raise ConfigError(f"{name} must be greater than or equal to group.consumer.min.{kind}.ms")
            if value > high:
                raise ConfigError(f"{name} must be less than or equal to group.consumer.max.{kind}.ms")
        if self.consumer_group_heartbeat_interval_ms >= self.consumer_group_session_timeout_ms:
            raise ConfigError(
                "group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms"
            )
        if self.consumer_group_max_size < 1:
            raise ConfigError("group.consumer.max.size must be at least 1")
        if not self.consumer_group_assignors:
            raise ConfigError("group.consumer.assignors must name at least one assignor")
        for name in self.consumer_group_assignors:
            if name not in KNOWN_ASSIGNORS:
                raise ConfigError(
                    f"group.consumer.assignors: unknown assignor {name!r} (group-broker has"
                    f" {', '.join(KNOWN_ASSIGNORS)}; custom assignor classes are not supported)"
                )
        if self.consumer_group_migration_policy not in MIGRATION_POLICIES:
            raise ConfigError(
                f"group.consumer.migration.policy must be one of {', '.join(MIGRATION_POLICIES)},"
                f" got {self.consumer_group_migration_policy!r}"
            )
        if "classic" not in self.rebalance_protocols:
            raise ConfigError("Disabling the 'classic' protocol is not supported.")
        for name in self.rebalance_protocols:
            if name not in SERVED_PROTOCOLS:
                raise ConfigError(
                    f"group.coordinator.rebalance.protocols: {name!r} groups are not served by group-broker"
                    f" (it serves {', '.join(SERVED_PROTOCOLS)})"
                )

    def serves(self, protocol: str) -> bool:
        """Whether `group.coordinator.rebalance.protocols` enables `protocol` (classic or consumer)."""
        return protocol in self.rebalance_protocols

    @classmethod
    def from_kafka_props(cls, props: Mapping[str, str], **overrides: Any) -> CoordinatorConfig:
        """Build from Kafka-style properties (strings); `overrides` are field values that win over them."""
        values = _integer_properties(props, KAFKA_PROPERTIES)
        for key, field_name in KAFKA_LIST_PROPERTIES.items():
            raw = props.get(key)
            if raw is not None:
                values[field_name] = tuple(item.strip().lower() for item in raw.split(",") if item.strip())
        for key, field_name in KAFKA_STRING_PROPERTIES.items():
            raw = props.get(key)
            if raw is not None:
                values[field_name] = raw.strip().lower()
        _check_overrides(cls, overrides)
        values.update(overrides)
        return cls(**values)

    def with_(self, **changes: Any) -> CoordinatorConfig:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)


@dataclass(frozen=True, slots=True, kw_only=True)
class TransactionConfig:
    """Every knob of the transaction coordinator. Defaults are Kafka 4.4's (rules T2, T45)."""

    transaction_state_log_num_partitions: int = 50
    """Partitions of `__transaction_state`; fixes the transactional-id-to-coordinator mapping (T1)."""
    transaction_max_timeout_ms: int = 900_000
    """Longest transaction timeout InitProducerId accepts (else INVALID_TRANSACTION_TIMEOUT, T7)."""
    abort_timed_out_transactions_interval_ms: int = 10_000
    """`transaction.abort.timed.out.transaction.cleanup.interval.ms`: how often Ongoing transactions past their
    timeout are looked for and aborted with an epoch bump (T46, T47)."""
    transactional_id_expiration_ms: int = 604_800_000
    """How long a transactional id may go without a transaction before it is forgotten (a tombstone, T48)."""
    remove_expired_transactional_ids_interval_ms: int = 3_600_000
    """`transaction.remove.expired.transaction.cleanup.interval.ms`: how often expired ids are looked for."""
    offsets_topic_num_partitions: int = 50
    """Partitions of `__consumer_offsets`: AddOffsetsToTxn adds the group's partition to the transaction (T27)."""
    write_timeout_ms: int = 30_000
    """How long a `__transaction_state` append may take before the request is answered COORDINATOR_NOT_AVAILABLE
    (Kafka's transaction state manager uses `request.timeout.ms`, 30000)."""
    retry_backoff_ms: int = 100
    """Wait before re-sending markers that could not be written, or re-writing a failed CompleteCommit/Abort
    (Kafka's marker channel retries on its next send; inter-broker `retry.backoff.ms` is 100)."""
    transaction_version: int = TRANSACTION_VERSION_MAX
    """The finalized `transaction.version` feature level (KIP-890; Kafka 4.4 finalizes 2 on a new cluster): the
    rules the coordinator's own aborts (timeouts, fencing) follow, and what ApiVersions advertises, which decides
    whether clients run version 2. Requests follow their own version's rules whatever it is, as in Kafka."""

    def __post_init__(self) -> None:
        if not 0 <= self.transaction_version <= TRANSACTION_VERSION_MAX:
            raise ConfigError(
                f"transaction.version must be between 0 and {TRANSACTION_VERSION_MAX}, got {self.transaction_version}"
            )
        for name in (*TRANSACTION_KAFKA_PROPERTIES.values(), "write_timeout_ms", "retry_backoff_ms"):
            if name == "transaction_version":
                continue
            if getattr(self, name) < 1:
                key = next((k for k, f in TRANSACTION_KAFKA_PROPERTIES.items() if f == name), name)
                raise ConfigError(f"{key} must be at least 1, got {getattr(self, name)}")

    @classmethod
    def from_kafka_props(cls, props: Mapping[str, str], **overrides: Any) -> TransactionConfig:
        """Build from Kafka-style properties (strings); `overrides` are field values that win over them."""
        values = _integer_properties(props, {key: (name, 1) for key, name in TRANSACTION_KAFKA_PROPERTIES.items()})
        _check_overrides(cls, overrides)
        values.update(overrides)
        return cls(**values)


def _integer_properties(props: Mapping[str, str], table: Mapping[str, tuple[str, int]]) -> dict[str, Any]:
    """The integer properties of `table` (key -> (field, multiplier)) present in `props`, as field values."""
    values: dict[str, Any] = {}
    for key, (field_name, multiplier) in table.items():
        raw = props.get(key)
        if raw is None:
            continue
        try:
            number = int(raw.strip())
        except ValueError:
            raise ConfigError(f"{key} must be an integer, got {raw!r}") from None
        values[field_name] = number * multiplier
    return values


def _check_overrides(cls: type, overrides: Mapping[str, Any]) -> None:
    unknown = set(overrides) - {f.name for f in fields(cls)}
    if unknown:
        raise ConfigError(f"unknown coordinator settings: {sorted(unknown)}")
