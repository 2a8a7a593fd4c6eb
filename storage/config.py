"""Topic-level configs: Kafka 4.4's catalogue of them, their broker defaults, and the log settings they make.

Kafka configures logs twice: broker-wide properties (``log.retention.ms``, ``message.max.bytes``, ...) give the
defaults, and per-topic configs (the names CreateTopics, AlterConfigs and DescribeConfigs use, ``retention.ms``)
override them. :data:`TOPIC_CONFIGS` lists every topic-level key Kafka 4.4 knows (``LogConfig``), each with its
type, its default when no broker setting is given, its validators and the broker keys it takes its default from
(``ServerTopicConfigSynonyms``: ``retention.ms`` <- ``log.retention.ms`` <- ``.minutes`` <- ``.hours``), so that
values are checked and shown exactly as Kafka checks and shows them (:mod:`storage.config_def`).

:class:`LogConfig` holds the effective values one partition log works with. Configs Kafka accepts but this storage
does not act on (``min.insync.replicas``, ``compression.type``, the tiered-storage keys, ...) are still validated
and kept, so tools that set them keep working; :data:`APPLIED` says which ones take effect.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from storage.config_def import (
    INT32_MAX,
    INT64_MAX,
    ConfigType,
    ConfigValue,
    OneOf,
    Range,
    RangeOrExactly,
    ThrottledReplicas,
    Validator,
    ValidList,
    check,
    format_value,
    parse_value,
)
from storage.errors import InvalidConfigError

__all__ = [
    "APPLIED",
    "COMPACT",
    "CREATE_TIME",
    "DELETE",
    "INT32_MAX",
    "INT64_MAX",
    "LOG_APPEND_TIME",
    "MIN_SEGMENT_BYTES",
    "TOPIC_CONFIGS",
    "TOPIC_CONFIG_NAMES",
    "BrokerSynonym",
    "LogConfig",
    "TopicConfigKey",
    "topic_defaults",
    "validate_topic_configs",
]

DELETE = "delete"
COMPACT = "compact"
CREATE_TIME = "CreateTime"
LOG_APPEND_TIME = "LogAppendTime"

_HOUR_MS = 3_600_000
_MINUTE_MS = 60_000
#: Kafka 4's floor of segment.bytes (and log.segment.bytes); smaller segments need internal.segment.bytes.
MIN_SEGMENT_BYTES = 1 << 20
_NOT_REMOTE = (
    "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage."
)


@dataclass(frozen=True, slots=True)
class BrokerSynonym:
    """A broker key a topic key takes its default from; ``unit_ms`` converts hours or minutes to milliseconds."""

    name: str
    unit_ms: int = 1


@dataclass(frozen=True, slots=True)
class TopicConfigKey:
    """One topic-level key as Kafka 4.4 defines it."""

    name: str
    type: ConfigType
    #: Kafka's default when no broker key gives one (``LogConfig``'s own), as parsed value.
    default: ConfigValue
    doc: str
    validators: tuple[Validator, ...] = ()
    #: The broker keys it takes its default from, the primary one first (empty: only the default above).
    synonyms: tuple[BrokerSynonym, ...] = ()
    #: The :class:`LogConfig` field it sets, None when this storage keeps the value without acting on it.
    field: str | None = None
    #: Kafka's internal keys (``internal.segment.bytes``): accepted, described only where a topic sets them.
    internal: bool = False
    sensitive: bool = False

    def parse(self, raw: str) -> ConfigValue:
        """The value Kafka would keep for ``raw``, or InvalidConfigError with Kafka's message."""
        return check(self.name, self.type, raw, self.validators)

    def text(self, value: ConfigValue) -> str | None:
        return format_value(self.type, value)


def _key(
    name: str,
    type_: ConfigType,
    default: ConfigValue,
    doc: str,
    *validators: Validator,
    synonyms: tuple[str | BrokerSynonym, ...] = (),
    field: str | None = None,
    internal: bool = False,
) -> TopicConfigKey:
    syns = tuple(s if isinstance(s, BrokerSynonym) else BrokerSynonym(s) for s in synonyms)
    return TopicConfigKey(name, type_, default, doc, validators, syns, field, internal)


_T = ConfigType
_POLICIES = ValidList((COMPACT, DELETE))
_RETENTION_SYNONYMS = (
    BrokerSynonym("log.retention.ms"),
    BrokerSynonym("log.retention.minutes", _MINUTE_MS),
    BrokerSynonym("log.retention.hours", _HOUR_MS),
)

#: Every topic-level key of Kafka 4.4, in Kafka's order.
TOPIC_CONFIGS: dict[str, TopicConfigKey] = {
    k.name: k
    for k in (
        _key(
            "segment.bytes",
            _T.INT,
            1_073_741_824,
            "Roll to a new segment file once the active one would grow past this many bytes.",
            Range(MIN_SEGMENT_BYTES),
            synonyms=("log.segment.bytes",),
            field="segment_bytes",
        ),
        _key(
            "segment.ms",
            _T.LONG,
            168 * _HOUR_MS,
            "Roll a non-empty active segment this long after its first record, so old data can be deleted or "
            "compacted.",
            Range(1),
            synonyms=("log.roll.ms", BrokerSynonym("log.roll.hours", _HOUR_MS)),
            field="segment_ms",
        ),
        _key(
            "segment.jitter.ms",
            _T.LONG,
            0,
            "Random amount subtracted from segment.ms so segments do not all roll together (not applied here).",
            Range(0),
            synonyms=("log.roll.jitter.ms", BrokerSynonym("log.roll.jitter.hours", _HOUR_MS)),
        ),
        _key(
            "segment.index.bytes",
            _T.INT,
            10_485_760,
            "Size of a segment's offset and time index files; a full index also rolls the segment.",
            Range(4),
            synonyms=("log.index.size.max.bytes",),
            field="segment_index_bytes",
        ),
        _key(
            "flush.messages",
            _T.LONG,
            INT64_MAX,
            "fsync the log after this many records have been appended since the last fsync.",
            Range(1),
            synonyms=("log.flush.interval.messages",),
            field="flush_messages",
        ),
        _key(
            "flush.ms",
            _T.LONG,
            INT64_MAX,
            "fsync the log when its last fsync is older than this.",
            Range(0),
            synonyms=("log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
            field="flush_ms",
        ),
        _key(
            "retention.bytes",
            _T.LONG,
            -1,
            "Delete the oldest segments while a partition holds more than this many bytes (-1: no size limit).",
            synonyms=("log.retention.bytes",),
            field="retention_bytes",
        ),
        _key(
            "retention.ms",
            _T.LONG,
            168 * _HOUR_MS,
            "Delete a segment once its newest record is older than this (-1: keep data forever).",
            Range(-1),
            synonyms=_RETENTION_SYNONYMS,
            field="retention_ms",
        ),
        _key(
            "max.message.bytes",
            _T.INT,
            1_048_588,
            "Largest record batch a producer may write to the topic; a bigger one is refused as MESSAGE_TOO_LARGE.",
            Range(0),
            synonyms=("message.max.bytes",),
            field="max_message_bytes",
        ),
        _key(
            "max.decompressed.message.bytes",
            _T.INT,
            2_147_483_639,
            "Largest decompressed size of one record the broker accepts (not enforced here).",
            Range(1, 2_147_483_639),
            synonyms=("max.decompressed.message.bytes",),
        ),
        _key(
            "index.interval.bytes",
            _T.INT,
            4096,
            "Bytes of log between two entries of the sparse offset and time indexes.",
            Range(0),
            synonyms=("log.index.interval.bytes",),
            field="index_interval_bytes",
        ),
        _key(
            "delete.retention.ms",
            _T.LONG,
            86_400_000,
            "How long a tombstone stays readable in a compacted topic after the cleaner has reached it.",
            Range(0),
            synonyms=("log.cleaner.delete.retention.ms",),
        ),
        _key(
            "min.compaction.lag.ms",
            _T.LONG,
            0,
            "Records younger than this are never compacted.",
            Range(0),
            synonyms=("log.cleaner.min.compaction.lag.ms",),
        ),
        _key(
            "max.compaction.lag.ms",
            _T.LONG,
            INT64_MAX,
            "Longest a record may stay uncompacted (not applied here).",
            Range(1),
            synonyms=("log.cleaner.max.compaction.lag.ms",),
        ),
        _key(
            "file.delete.delay.ms",
            _T.LONG,
            60_000,
            "Wait before removing a deleted segment's files (segments are removed at once here).",
            Range(0),
            synonyms=("log.segment.delete.delay.ms",),
        ),
        _key(
            "min.cleanable.dirty.ratio",
            _T.DOUBLE,
            0.5,
            "Share of not-yet-compacted bytes in a log that makes the cleaner compact it.",
            Range(0, 1),
            synonyms=("log.cleaner.min.cleanable.ratio",),
        ),
        _key(
            "cleanup.policy",
            _T.LIST,
            (DELETE,),
            "What happens to old segments: delete (retention), compact (latest value per key), both, or neither.",
            _POLICIES,
            synonyms=("log.cleanup.policy",),
            field="cleanup_policy",
        ),
        _key(
            "unclean.leader.election.enable",
            _T.BOOLEAN,
            False,
            "Allow an out-of-sync replica to become leader (one replica here: no effect).",
            synonyms=("unclean.leader.election.enable",),
        ),
        _key(
            "min.insync.replicas",
            _T.INT,
            1,
            "Replicas that must have a write for acks=all to succeed (one replica here: reported only).",
            Range(1),
            synonyms=("min.insync.replicas",),
        ),
        _key(
            "compression.type",
            _T.STRING,
            "producer",
            "Codec batches are stored with; producer keeps them as sent (batches are always stored as sent here).",
            OneOf(("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")),
            synonyms=("compression.type",),
        ),
        _key(
            "compression.gzip.level",
            _T.INT,
            -1,
            "gzip level when the broker recompresses (never here).",
            RangeOrExactly(Range(1, 9), -1),
            synonyms=("compression.gzip.level",),
        ),
        _key(
            "compression.lz4.level",
            _T.INT,
            9,
            "lz4 level when the broker recompresses (never here).",
            Range(1, 17),
            synonyms=("compression.lz4.level",),
        ),
        _key(
            "compression.zstd.level",
            _T.INT,
            3,
            "zstd level when the broker recompresses (never here).",
            Range(-131072, 22),
            synonyms=("compression.zstd.level",),
        ),
        _key(
            "preallocate",
            _T.BOOLEAN,
            False,
            "Preallocate segment files on creation (not done here).",
            synonyms=("log.preallocate",),
        ),
        _key(
            "message.timestamp.type",
            _T.STRING,
            CREATE_TIME,
            "CreateTime keeps the producer's timestamps, LogAppendTime stamps batches with the broker's time.",
            OneOf((CREATE_TIME, LOG_APPEND_TIME)),
            synonyms=("log.message.timestamp.type",),
            field="message_timestamp_type",
        ),
        _key(
            "message.timestamp.before.max.ms",
            _T.LONG,
            INT64_MAX,
            "With CreateTime, refuse a record whose timestamp is further than this in the past (INVALID_TIMESTAMP).",
            Range(0),
            synonyms=("log.message.timestamp.before.max.ms",),
            field="message_timestamp_before_max_ms",
        ),
        _key(
            "message.timestamp.after.max.ms",
            _T.LONG,
            _HOUR_MS,
            "With CreateTime, refuse a record whose timestamp is further than this in the future (INVALID_TIMESTAMP).",
            Range(0),
            synonyms=("log.message.timestamp.after.max.ms",),
            field="message_timestamp_after_max_ms",
        ),
        _key(
            "leader.replication.throttled.replicas",
            _T.LIST,
            (),
            "Replicas whose leader-side replication is throttled (one replica here: no effect).",
            ThrottledReplicas(),
        ),
        _key(
            "follower.replication.throttled.replicas",
            _T.LIST,
            (),
            "Replicas whose follower-side replication is throttled (one replica here: no effect).",
            ThrottledReplicas(),
        ),
        _key("remote.storage.enable", _T.BOOLEAN, False, "Tiered storage for the topic (not available here)."),
        _key(
            "local.retention.ms",
            _T.LONG,
            -2,
            "With tiered storage, how long segments stay on local disk (-2: as retention.ms).",
            Range(-2),
            synonyms=("log.local.retention.ms",),
        ),
        _key(
            "local.retention.bytes",
            _T.LONG,
            -2,
            "With tiered storage, how many bytes stay on local disk (-2: as retention.bytes).",
            Range(-2),
            synonyms=("log.local.retention.bytes",),
        ),
        _key(
            "remote.log.copy.disable",
            _T.BOOLEAN,
            False,
            "With tiered storage, stop copying segments to remote storage.",
        ),
        _key(
            "remote.copy.lag.ms",
            _T.LONG,
            0,
            "With tiered storage, how long a rolled segment may wait before it is copied.",
            Range(-1),
            synonyms=("log.remote.copy.lag.ms",),
        ),
        _key(
            "remote.copy.lag.bytes",
            _T.LONG,
            -1,
            "With tiered storage, how many rolled bytes may wait before they are copied.",
            Range(-1),
            synonyms=("log.remote.copy.lag.bytes",),
        ),
        _key(
            "remote.log.delete.on.disable",
            _T.BOOLEAN,
            False,
            "With tiered storage, delete the remote data when tiered storage is turned off for the topic.",
        ),
        _key(
            "errors.deadletterqueue.group.enable",
            _T.BOOLEAN,
            False,
            "Let share groups write undeliverable records of this topic to a dead-letter queue (not served here).",
        ),
        _key(
            "internal.segment.bytes",
            _T.INT,
            None,
            "Segment size below segment.bytes' 1 MiB floor, for tests; wins over segment.bytes when set.",
            Range(0),
            field="segment_bytes",
            internal=True,
        ),
    )
}

#: The topic-level keys DescribeConfigs lists for every topic (Kafka's internal keys only when a topic sets them).
TOPIC_CONFIG_NAMES: frozenset[str] = frozenset(name for name, key in TOPIC_CONFIGS.items() if not key.internal)
#: The keys that change what this storage does; the others are validated, kept and reported only.
APPLIED: frozenset[str] = frozenset(name for name, key in TOPIC_CONFIGS.items() if key.field is not None)


@dataclass(frozen=True, slots=True)
class LogConfig:
    """Effective settings of one partition log; field defaults are Kafka's broker defaults."""

    #: segment.bytes / log.segment.bytes (or internal.segment.bytes): roll before a segment grows past this.
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
    #: cleanup.policy / log.cleanup.policy: any of "delete", "compact" (none: keep everything, compact nothing).
    cleanup_policy: tuple[str, ...] = (DELETE,)
    #: flush.messages / log.flush.interval.messages: fsync after this many unflushed records (Long.MAX: never).
    flush_messages: int = INT64_MAX
    #: flush.ms / log.flush.interval.ms: fsync when the last flush is older than this (Long.MAX: never).
    flush_ms: int = INT64_MAX
    #: max.message.bytes / message.max.bytes: largest batch accepted from a producer.
    max_message_bytes: int = 1_048_588
    #: message.timestamp.type / log.message.timestamp.type: "CreateTime" or "LogAppendTime".
    message_timestamp_type: str = CREATE_TIME
    #: message.timestamp.before.max.ms: with CreateTime, how far in the past a record's timestamp may lie.
    message_timestamp_before_max_ms: int = INT64_MAX
    #: message.timestamp.after.max.ms: with CreateTime, how far in the future a record's timestamp may lie.
    message_timestamp_after_max_ms: int = _HOUR_MS

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
        """Broker defaults from ``server.properties``-style keys (see :func:`topic_defaults`)."""
        return cls().with_overrides(topic_defaults(props), validated=True)

    def with_overrides(self, overrides: Mapping[str, str], *, validated: bool = False) -> LogConfig:
        """This config with per-topic overrides applied; an ``internal.segment.bytes`` wins over ``segment.bytes``.

        ``validated`` overrides (what ``topics.json`` records) are only parsed, not checked again: a value an older
        release accepted, or one a later broker default conflicts with, still loads as Kafka loads it.
        """
        normalized = dict(overrides) if validated else validate_topic_configs(overrides)
        changes: dict[str, Any] = {}
        for name, key in TOPIC_CONFIGS.items():  # catalogue order: internal.segment.bytes comes last
            if key.field is not None and name in normalized:
                # Validated values are only read back: a value an older release accepted still loads.
                changes[key.field] = parse_value(key.type, normalized[name], name)
        return dataclasses.replace(self, **changes) if changes else self


# --- broker defaults --------------------------------------------------------------------------------------------


def _as_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(str(item) for item in value)
    if isinstance(value, float):
        return format_value(ConfigType.DOUBLE, value) or ""
    return str(value)


def _broker_default(key: TopicConfigKey, props: Mapping[str, object]) -> str | None:
    """The value a topic key gets from the broker keys (Kafka's ``KafkaConfig.extractLogConfigMap``): the first of
    its synonyms that is set, converted to milliseconds; None when none is set."""
    for synonym in key.synonyms:
        raw = props.get(synonym.name)
        if raw is None:
            continue
        text = _as_text(raw)
        if synonym.unit_ms == 1:
            return text
        value = int(text.strip()) * synonym.unit_ms
        # Kafka reads any negative retention as "forever" (-1), whatever the unit.
        return str(-1 if key.name == "retention.ms" and value < 0 else value)
    return None


def topic_defaults(props: Mapping[str, object]) -> dict[str, str]:
    """Every listed topic key with the default the broker gives it, as Kafka shows it.

    ``props`` are broker keys with text or parsed values (None: not set). As in Kafka, the finest-grained key wins
    (``log.retention.ms`` over ``.minutes`` over ``.hours``); keys that are not log settings are ignored. A broker
    value is checked with the topic key's rules, as Kafka checks the merged config.
    """
    out: dict[str, str] = {}
    for name, key in TOPIC_CONFIGS.items():
        if key.internal:
            continue
        raw = _broker_default(key, props)
        value = key.default if raw is None else key.parse(raw)
        text = key.text(value)
        assert text is not None, name
        out[name] = text
    return out


# --- validation ---------------------------------------------------------------------------------------------------


def validate_topic_configs(
    configs: Mapping[str, str | None], defaults: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Check topic overrides as Kafka's ``LogConfig.validate`` does; return them normalised as Kafka stores them.

    Raises :class:`~storage.errors.InvalidConfigError` (INVALID_CONFIG) for an unknown name, a null or bad value,
    tiered storage (not available), or a ``min.compaction.lag.ms`` above ``max.compaction.lag.ms`` once merged with
    ``defaults`` (the topic's broker defaults; Kafka's own when None).
    """
    unknown = next((name for name in configs if name not in TOPIC_CONFIGS), None)
    if unknown is not None:  # Kafka checks every name before any value
        raise InvalidConfigError(f"Unknown topic config name: {unknown}")
    out: dict[str, str] = {}
    for name, raw in configs.items():
        key = TOPIC_CONFIGS[name]
        if raw is None:
            raise InvalidConfigError(f"Null value not supported for topic configs: {name}")
        text = key.text(key.parse(raw))
        assert text is not None, name
        out[name] = text
    if out.get("remote.storage.enable") == "true":
        raise InvalidConfigError(_NOT_REMOTE)
    merged = {**(defaults if defaults is not None else topic_defaults({})), **out}
    min_lag, max_lag = int(merged["min.compaction.lag.ms"]), int(merged["max.compaction.lag.ms"])
    if min_lag > max_lag:
        raise InvalidConfigError(
            f"conflict topic config setting min.compaction.lag.ms ({min_lag}) > max.compaction.lag.ms ({max_lag})"
        )
    return out
