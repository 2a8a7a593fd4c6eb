"""The coordinator's configuration, under Kafka's names and with Kafka's defaults (group-protocol.md Part 3).

The broker maps its properties with `CoordinatorConfig.from_kafka_props`, so an operator sets
`group.initial.rebalance.delay.ms=0` exactly as for Kafka. Keys the coordinator does not own are ignored (the
broker passes its whole property set); a value that is not an integer, or out of range, is a configuration error.
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
}


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

    @classmethod
    def from_kafka_props(cls, props: Mapping[str, str], **overrides: Any) -> CoordinatorConfig:
        """Build from Kafka-style properties (strings); `overrides` are field values that win over them."""
        values: dict[str, Any] = {}
        for key, (field_name, multiplier) in KAFKA_PROPERTIES.items():
            raw = props.get(key)
            if raw is None:
                continue
            try:
                number = int(raw.strip())
            except ValueError:
                raise ConfigError(f"{key} must be an integer, got {raw!r}") from None
            values[field_name] = number * multiplier
        known = {f.name for f in fields(cls)}
        unknown = set(overrides) - known
        if unknown:
            raise ConfigError(f"unknown coordinator settings: {sorted(unknown)}")
        values.update(overrides)
        return cls(**values)

    def with_(self, **changes: Any) -> CoordinatorConfig:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)
