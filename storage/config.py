"""Log configuration with Kafka's names, defaults and validation rules.

Kafka configures logs twice: broker-wide ``log.*`` properties give the defaults, and per-topic configs (the
names CreateTopics and DescribeConfigs use, e.g. ``retention.ms``) override them. :class:`LogConfig` holds the
effective values one partition log works with; :func:`validate_topic_configs` checks a CreateTopics config map the
way Kafka's ``LogConfig.validate`` does, so clients get INVALID_CONFIG for the same inputs a real broker rejects.
Configs Kafka accepts but this storage does not act on (``min.insync.replicas``, ``compression.type``, ...) are
still validated and kept, so tools that set them keep working.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from storage.errors import InvalidConfigError

__all__ = [
    "COMPACT",
    "CREATE_TIME",
    "DELETE",
    "INT32_MAX",
    "INT64_MAX",
    "LOG_APPEND_TIME",
    "TOPIC_CONFIG_NAMES",
    "LogConfig",
    "validate_topic_configs",
]

INT32_MAX = (1 << 31) - 1
INT64_MAX = (1 << 63) - 1
_INT64_MIN = -(1 << 63)

DELETE = "delete"
COMPACT = "compact"
CREATE_TIME = "CreateTime"
LOG_APPEND_TIME = "LogAppendTime"

_HOUR_MS = 3_600_000
_MINUTE_MS = 60_000
#: LegacyRecord.RECORD_OVERHEAD_V0, Kafka's lower bound for segment.bytes.
_MIN_SEGMENT_BYTES = 14


@dataclass(frozen=True, slots=True)
class LogConfig:
    """Effective settings of one partition log; field defaults are Kafka's broker defaults."""

    #: segment.bytes / log.segment.bytes: roll before a segment file grows past this.
    segment_bytes: int = 1_073_741_824
    #: segment.ms / log.roll.ms (log.roll.hours=168): roll a non-empty segment this long after its first batch.
    segment_ms: int = 168 * _HOUR_MS
    #: segment.index.bytes / log.index.size.max.bytes: a full offset or time index also rolls the segment.
    segment_index_bytes: int = 10_485_760
    #: index.interval.bytes / log.index.interval.bytes: bytes of log between two sparse index entries.
    index_interval_bytes: int = 4096
    #: retention.ms / log.retention.ms (log.retention.hours=168); -1 keeps data forever.
    retention_ms: int = 168 * _HOUR_MS
    #: retention.bytes / log.retention.bytes; -1 means no size limit.
    retention_bytes: int = -1
    #: cleanup.policy / log.cleanup.policy: any of "delete", "compact".
    cleanup_policy: tuple[str, ...] = (DELETE,)
    #: flush.messages / log.flush.interval.messages: fsync after this many unflushed records (Long.MAX: never).
    flush_messages: int = INT64_MAX
    #: flush.ms / log.flush.interval.ms: fsync when the last flush is older than this (Long.MAX: never).
    flush_ms: int = INT64_MAX
    #: max.message.bytes / message.max.bytes: largest batch accepted from a producer.
    max_message_bytes: int = 1_048_588
    #: message.timestamp.type / log.message.timestamp.type: "CreateTime" or "LogAppendTime".
    message_timestamp_type: str = CREATE_TIME

    @property
    def delete_enabled(self) -> bool:
        return DELETE in self.cleanup_policy

    @property
    def compact_enabled(self) -> bool:
        return COMPACT in self.cleanup_policy

    @property
    def log_append_time(self) -> bool:
        return self.message_timestamp_type == LOG_APPEND_TIME

    @classmethod
    def from_broker_properties(cls, props: Mapping[str, object]) -> LogConfig:
        """Broker defaults from ``server.properties``-style keys; keys that are not log settings are ignored.

        Values may be text or already parsed (ints, lists); None means "not set". Like Kafka, the finest-grained
        key wins: ``log.retention.ms`` over ``.minutes`` over ``.hours``, and ``log.roll.ms`` over
        ``log.roll.hours``.
        """
        text = {name: _as_text(value) for name, value in props.items() if value is not None}
        topic: dict[str, str] = {}
        for broker_name, topic_name in _BROKER_TO_TOPIC.items():
            if broker_name in text:
                topic[topic_name] = text[broker_name]
        for topic_name, prefix in (("segment.ms", "log.roll"), ("retention.ms", "log.retention")):
            for suffix, unit in ((".ms", 1), (".minutes", _MINUTE_MS), (".hours", _HOUR_MS)):
                name = prefix + suffix
                if name in text:
                    value = _parse_int(text[name], name)
                    # Kafka reads any negative retention as "forever" (-1), whatever the unit.
                    topic[topic_name] = str(-1 if value < 0 else value * unit)
                    break
        return cls().with_overrides(topic)

    def with_overrides(self, overrides: Mapping[str, str]) -> LogConfig:
        """This config with per-topic overrides applied; the overrides are validated first."""
        normalized = validate_topic_configs(overrides)
        changes: dict[str, Any] = {}
        for name, value in normalized.items():
            spec = _TOPIC_CONFIGS[name]
            if spec.field is not None:
                changes[spec.field] = spec.convert(value)
        return dataclasses.replace(self, **changes) if changes else self

    def topic_properties(self) -> dict[str, str]:
        """Every topic-level config name with its value under this config, as DescribeConfigs lists them."""
        out = dict(_UNMODELLED_DEFAULTS)
        for name, spec in _TOPIC_CONFIGS.items():
            if spec.field is not None:
                value = getattr(self, spec.field)
                out[name] = ",".join(value) if isinstance(value, tuple) else str(value)
        return dict(sorted(out.items()))


# --- validation ---------------------------------------------------------------------------------------------------


def _as_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(item) for item in value)
    return str(value)


def _parse_int(raw: str, name: str) -> int:
    try:
        return int(raw.strip())
    except ValueError:
        raise InvalidConfigError(f"Invalid value {raw} for configuration {name}: Not a number") from None


Parser = Callable[[str, str], str]


def _integer(low: int, high: int) -> Parser:
    def parse(raw: str, name: str) -> str:
        value = _parse_int(raw, name)
        if not low <= value <= high:
            bound = f"at least {low}" if high in (INT32_MAX, INT64_MAX) else f"in [{low}, {high}]"
            raise InvalidConfigError(f"Invalid value {raw} for configuration {name}: Value must be {bound}")
        return str(value)

    return parse


def _double(low: float, high: float) -> Parser:
    def parse(raw: str, name: str) -> str:
        try:
            value = float(raw.strip())
        except ValueError:
            raise InvalidConfigError(f"Invalid value {raw} for configuration {name}: Not a number") from None
        if not low <= value <= high:
            raise InvalidConfigError(f"Invalid value {raw} for configuration {name}: Value must be in [{low}, {high}]")
        return str(value)

    return parse


def _choice(*allowed: str) -> Parser:
    def parse(raw: str, name: str) -> str:
        value = raw.strip()
        if value not in allowed:
            raise InvalidConfigError(
                f"Invalid value {raw} for configuration {name}: String must be one of: {', '.join(allowed)}"
            )
        return value

    return parse


def _boolean(raw: str, name: str) -> str:
    value = raw.strip().lower()
    if value not in ("true", "false"):
        raise InvalidConfigError(
            f"Invalid value {raw} for configuration {name}: Expected value to be either true or false"
        )
    return value


def _cleanup_policy(raw: str, name: str) -> str:
    items = [item.strip() for item in raw.split(",")]
    if not items or any(item not in (DELETE, COMPACT) for item in items):
        raise InvalidConfigError(
            f"Invalid value {raw} for configuration {name}: String must be one of: compact, delete"
        )
    return ",".join(dict.fromkeys(items))


def _any(raw: str, name: str) -> str:
    return raw


@dataclass(frozen=True, slots=True)
class _Spec:
    parse: Parser
    #: LogConfig field the value feeds, or None for configs that are only validated and stored.
    field: str | None = None

    def convert(self, value: str) -> Any:
        if self.field == "cleanup_policy":
            return tuple(value.split(","))
        if self.field == "message_timestamp_type":
            return value
        return int(value)


_TOPIC_CONFIGS: dict[str, _Spec] = {
    "segment.bytes": _Spec(_integer(_MIN_SEGMENT_BYTES, INT32_MAX), "segment_bytes"),
    "segment.ms": _Spec(_integer(1, INT64_MAX), "segment_ms"),
    "segment.index.bytes": _Spec(_integer(4, INT32_MAX), "segment_index_bytes"),
    "index.interval.bytes": _Spec(_integer(0, INT32_MAX), "index_interval_bytes"),
    "retention.ms": _Spec(_integer(-1, INT64_MAX), "retention_ms"),
    "retention.bytes": _Spec(_integer(_INT64_MIN, INT64_MAX), "retention_bytes"),
    "cleanup.policy": _Spec(_cleanup_policy, "cleanup_policy"),
    "flush.messages": _Spec(_integer(1, INT64_MAX), "flush_messages"),
    "flush.ms": _Spec(_integer(0, INT64_MAX), "flush_ms"),
    "max.message.bytes": _Spec(_integer(0, INT32_MAX), "max_message_bytes"),
    "message.timestamp.type": _Spec(_choice(CREATE_TIME, LOG_APPEND_TIME), "message_timestamp_type"),
    # Accepted and stored, not acted on by this storage.
    "compression.type": _Spec(_choice("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")),
    "compression.gzip.level": _Spec(_integer(-1, 9)),
    "compression.lz4.level": _Spec(_integer(1, 17)),
    "compression.zstd.level": _Spec(_integer(-131072, 22)),
    "delete.retention.ms": _Spec(_integer(0, INT64_MAX)),
    "file.delete.delay.ms": _Spec(_integer(0, INT64_MAX)),
    "follower.replication.throttled.replicas": _Spec(_any),
    "leader.replication.throttled.replicas": _Spec(_any),
    "local.retention.bytes": _Spec(_integer(-2, INT64_MAX)),
    "local.retention.ms": _Spec(_integer(-2, INT64_MAX)),
    "max.compaction.lag.ms": _Spec(_integer(1, INT64_MAX)),
    "message.timestamp.after.max.ms": _Spec(_integer(0, INT64_MAX)),
    "message.timestamp.before.max.ms": _Spec(_integer(0, INT64_MAX)),
    "min.cleanable.dirty.ratio": _Spec(_double(0.0, 1.0)),
    "min.compaction.lag.ms": _Spec(_integer(0, INT64_MAX)),
    "min.insync.replicas": _Spec(_integer(1, INT32_MAX)),
    "preallocate": _Spec(_boolean),
    "remote.log.copy.disable": _Spec(_boolean),
    "remote.log.delete.on.disable": _Spec(_boolean),
    "remote.storage.enable": _Spec(_boolean),
    "segment.jitter.ms": _Spec(_integer(0, INT64_MAX)),
    "unclean.leader.election.enable": _Spec(_boolean),
}

#: Every topic-level config name Kafka accepts (and so CreateTopics may carry).
TOPIC_CONFIG_NAMES: frozenset[str] = frozenset(_TOPIC_CONFIGS)

#: Kafka's defaults for the configs that are stored but not modelled in LogConfig.
_UNMODELLED_DEFAULTS: dict[str, str] = {
    "compression.type": "producer",
    "compression.gzip.level": "-1",
    "compression.lz4.level": "9",
    "compression.zstd.level": "3",
    "delete.retention.ms": "86400000",
    "file.delete.delay.ms": "60000",
    "follower.replication.throttled.replicas": "",
    "leader.replication.throttled.replicas": "",
    "local.retention.bytes": "-2",
    "local.retention.ms": "-2",
    "max.compaction.lag.ms": str(INT64_MAX),
    "message.timestamp.after.max.ms": str(INT64_MAX),
    "message.timestamp.before.max.ms": str(INT64_MAX),
    "min.cleanable.dirty.ratio": "0.5",
    "min.compaction.lag.ms": "0",
    "min.insync.replicas": "1",
    "preallocate": "false",
    "remote.log.copy.disable": "false",
    "remote.log.delete.on.disable": "false",
    "remote.storage.enable": "false",
    "segment.jitter.ms": "0",
    "unclean.leader.election.enable": "false",
}

#: Broker property -> topic config it supplies the default of (the time-unit variants are handled apart).
_BROKER_TO_TOPIC: dict[str, str] = {
    "log.segment.bytes": "segment.bytes",
    "log.index.size.max.bytes": "segment.index.bytes",
    "log.index.interval.bytes": "index.interval.bytes",
    "log.retention.bytes": "retention.bytes",
    "log.cleanup.policy": "cleanup.policy",
    "log.flush.interval.messages": "flush.messages",
    "log.flush.interval.ms": "flush.ms",
    "message.max.bytes": "max.message.bytes",
    "log.message.timestamp.type": "message.timestamp.type",
}


def validate_topic_configs(configs: Mapping[str, str]) -> dict[str, str]:
    """Check names and values as Kafka does for CreateTopics; return the normalized map.

    Raises :class:`~storage.errors.InvalidConfigError` (INVALID_CONFIG) for an unknown name or a bad value.
    """
    out: dict[str, str] = {}
    for name, raw in configs.items():
        spec = _TOPIC_CONFIGS.get(name)
        if spec is None:
            raise InvalidConfigError(f"Unknown topic config name: {name}")
        if not isinstance(raw, str):
            raise InvalidConfigError(f"Null value not supported for topic config {name}")
        out[name] = spec.parse(raw, name)
    return out
