"""Broker configuration with Kafka's names, types and defaults.

Layering is Kafka's: built-in defaults, then a `server.properties` file, then `KAFKA_*` environment variables (the
Confluent/Apache docker image convention), then `--override key=value` arguments. An unknown key is an error at
startup, and a bad value names its key, so a typo never silently falls back to a default.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coordinator.config import ALL_KAFKA_PROPERTIES, CoordinatorConfig, TransactionConfig
from coordinator.config import ConfigError as CoordinatorConfigError
from storage.config import COMPACT, CREATE_TIME, DELETE, LOG_APPEND_TIME
from storage.config_def import (
    ConfigType,
    InvalidValueError,
    OneOf,
    Range,
    RangeOrExactly,
    Validator,
    ValidList,
    parse_value,
)
from storage.errors import InvalidConfigError

INT32_MAX = 2147483647
INT64_MAX = 9223372036854775807
KAFKA_DEFAULT_LOG_DIR = "/tmp/kafka-logs"  # noqa: S108 - Kafka's own default; server.properties sets ./data
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")  # Kafka's SecurityProtocol names
CONTROL_TOKEN = "control.listener.token"  # noqa: S105 - the key's name, not a token
#: The one `authorizer.class.name` served: Kafka's KRaft ACL authorizer (ours in broker/security/authorizer.py).
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
KAFKA_SECURITY_PROTOCOL_MAP = "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"


class ConfigError(ValueError):
    """A configuration key is unknown or its value is invalid; the message names the key."""


#: Kafka's dynamic update modes (``DynamicBrokerConfig.dynamicConfigUpdateModes``): a key Kafka lets AlterConfigs
#: change for the whole cluster (resource "") or per broker, or only per broker (resource "<node id>").
CLUSTER_WIDE = "cluster-wide"
PER_BROKER = "per-broker"

_TYPES = {
    "int": ConfigType.INT,
    "short": ConfigType.SHORT,
    "long": ConfigType.LONG,
    "bool": ConfigType.BOOLEAN,
    "string": ConfigType.STRING,
    "list": ConfigType.LIST,
    "double": ConfigType.DOUBLE,
    "password": ConfigType.PASSWORD,
}


@dataclass(frozen=True, slots=True)
class ConfigKey:
    """One broker key: Kafka's name, type and default, our one-line meaning, and how it may change at runtime."""

    name: str
    type: str  # int | short | long | bool | string | list | double
    default: Any
    doc: str
    low: int | None = None
    choices: tuple[str, ...] | None = None  # case-insensitive, stored lower-cased
    applied: bool = True  # False: accepted for compatibility with Kafka's files, has no effect here
    high: int | None = None
    validators: tuple[Validator, ...] = ()
    #: Kafka's dynamic update mode (CLUSTER_WIDE / PER_BROKER), None where Kafka only reads it at startup.
    dynamic: str | None = None
    #: False for a key Kafka changes at runtime but this broker only reads at startup: AlterConfigs refuses it.
    live: bool = True

    @property
    def config_type(self) -> ConfigType:
        """The type DescribeConfigs reports (Kafka's ``ConfigDef.Type``)."""
        return _TYPES[self.type]

    @property
    def sensitive(self) -> bool:
        """Kafka never shows a PASSWORD key's value (DescribeConfigs answers null with is_sensitive)."""
        return self.config_type is ConfigType.PASSWORD

    @property
    def checks(self) -> tuple[Validator, ...]:
        """Kafka's validators of the key: its range, then any others."""
        bounds: tuple[Validator, ...] = (Range(self.low, self.high),) if self.low is not None or self.high else ()
        return bounds + self.validators

    @property
    def alterable(self) -> bool:
        """AlterConfigs may change it here: Kafka's dynamic keys, but those this broker cannot apply live."""
        return self.dynamic is not None and (self.live or not self.applied)


def _k(
    name: str,
    type_: str,
    default: Any,
    doc: str,
    *validators: Validator,
    low: int | None = None,
    high: int | None = None,
    choices: tuple[str, ...] | None = None,
    applied: bool = True,
    dynamic: str | None = None,
    live: bool = True,
) -> ConfigKey:
    return ConfigKey(name, type_, default, doc, low, choices, applied, high, validators, dynamic, live)


_C = CLUSTER_WIDE
_GZIP_LEVEL = RangeOrExactly(Range(1, 9), -1)


KEYS: dict[str, ConfigKey] = {
    k.name: k
    for k in (
        # server
        _k("node.id", "int", 1, "This broker's id in Metadata and FindCoordinator answers.", low=0),
        _k("broker.id", "int", -1, "Alias of node.id kept for old configs; -1 means use node.id.", low=-1),
        _k(
            "cluster.nodes",
            "int",
            1,
            "Broker nodes this process runs as one test cluster (not a Kafka key): ids node.id, node.id+1, ..., "
            "each with its own listener ports (port + its index), replicas simulated on the shared log.dirs.",
            low=1,
            high=64,
        ),
        _k(
            "cluster.coordinator.load.ms",
            "long",
            0,
            "How long a coordinator partition that moved to another node (cluster.nodes) stays loading, on the broker "
            "clock (virtual time when frozen), before its load from the log starts (not a Kafka key).",
            low=0,
        ),
        _k(
            "listeners",
            "list",
            "PLAINTEXT://127.0.0.1:9092",
            "Where to accept connections (host:port, 0 = any).",
            dynamic=PER_BROKER,
            live=False,
        ),
        _k(
            "advertised.listeners",
            "list",
            None,
            "Addresses given to clients, per listener name: a client is told the address of the listener it connected "
            "on; a listener not named here advertises its `listeners` address.",
        ),
        _k(
            "listener.security.protocol.map",
            "string",
            KAFKA_SECURITY_PROTOCOL_MAP,
            "Listener name to security protocol: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.",
            dynamic=PER_BROKER,
            live=False,
        ),
        _k("log.dirs", "list", KAFKA_DEFAULT_LOG_DIR, "Data directory (only the first entry is used)."),
        _k("log.dir", "list", KAFKA_DEFAULT_LOG_DIR, "Used when log.dirs is not set."),
        _k("log.file", "string", None, "Append the broker's own log lines here instead of stderr (not a Kafka key)."),
        _k("socket.request.max.bytes", "int", 104857600, "Largest request frame accepted.", low=1),
        _k("max.connections", "int", INT32_MAX, "Open connections allowed at once.", low=1, dynamic=_C, live=False),
        _k(
            "connections.max.idle.ms",
            "long",
            600000,
            "Close connections with no bytes read or written for this long, even mid-frame (-1: never).",
            low=-1,
        ),
        _k(
            "message.max.bytes",
            "int",
            1048588,
            "Largest record batch accepted by Produce (default of topics' max.message.bytes).",
            low=0,
            dynamic=_C,
        ),
        _k(
            "fetch.max.bytes",
            "int",
            57671680,
            "Most record bytes one Fetch response carries, whatever the request's max_bytes (KIP-541).",
            low=1024,
        ),
        _k("num.partitions", "int", 1, "Partitions of auto-created topics.", low=1),
        _k(
            "default.replication.factor",
            "int",
            1,
            "Replication factor of auto-created topics (and CreateTopics' -1), at most cluster.nodes.",
            low=1,
        ),
        _k("auto.create.topics.enable", "bool", True, "Create a topic when a Metadata request names it."),
        _k("delete.topic.enable", "bool", True, "Allow DeleteTopics."),
        _k("min.insync.replicas", "int", 1, "Reported in DescribeConfigs (single node).", low=1, dynamic=_C),
        _k(
            "compression.type",
            "string",
            "producer",
            "Reported in DescribeConfigs; batches are stored as sent.",
            OneOf(("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")),
            dynamic=_C,
        ),
        _k("compression.gzip.level", "int", -1, "gzip level of recompression.", _GZIP_LEVEL, applied=False, dynamic=_C),
        _k("compression.lz4.level", "int", 9, "lz4 level of recompression.", low=1, high=17, applied=False, dynamic=_C),
        _k(
            "compression.zstd.level",
            "int",
            3,
            "zstd level of recompression.",
            low=-131072,
            high=22,
            applied=False,
            dynamic=_C,
        ),
        _k(
            "max.decompressed.message.bytes",
            "int",
            2147483639,
            "Largest decompressed record accepted.",
            low=1,
            high=2147483639,
            applied=False,
            dynamic=_C,
        ),
        _k(
            "unclean.leader.election.enable",
            "bool",
            False,
            "Single replica: nothing to elect.",
            applied=False,
            dynamic=_C,
        ),
        # storage
        _k("log.segment.bytes", "int", 1073741824, "Roll a segment at this size.", low=1048576, dynamic=_C),
        _k("log.roll.ms", "long", None, "Roll a segment after this long (overrides log.roll.hours).", dynamic=_C),
        _k("log.roll.hours", "int", 168, "Roll a segment after this many hours.", low=1),
        _k("log.roll.jitter.ms", "long", None, "Random early roll (not applied).", applied=False, dynamic=_C),
        _k("log.roll.jitter.hours", "int", 0, "As log.roll.jitter.ms, in hours (not applied).", low=0, applied=False),
        _k("log.retention.ms", "long", None, "Delete segments older than this (-1: never).", dynamic=_C),
        _k("log.retention.minutes", "int", None, "As log.retention.ms, in minutes."),
        _k("log.retention.hours", "int", 168, "As log.retention.ms, in hours."),
        _k(
            "log.retention.bytes",
            "long",
            -1,
            "Delete old segments beyond this size per partition (-1: no limit).",
            dynamic=_C,
        ),
        _k("log.retention.check.interval.ms", "long", 300000, "How often retention runs.", low=1),
        _k("log.index.interval.bytes", "int", 4096, "Bytes between offset index entries.", low=0, dynamic=_C),
        _k("log.index.size.max.bytes", "int", 10485760, "Size of a segment's index files.", low=4, dynamic=_C),
        _k(
            "log.flush.interval.messages",
            "long",
            INT64_MAX,
            "fsync after this many appended messages.",
            low=1,
            dynamic=_C,
        ),
        _k(
            "log.flush.interval.ms",
            "long",
            None,
            "fsync at least this often (unset: log.flush.scheduler.interval.ms).",
            dynamic=_C,
        ),
        _k("log.flush.scheduler.interval.ms", "long", INT64_MAX, "Default of log.flush.interval.ms."),
        _k(
            "log.cleanup.policy",
            "list",
            DELETE,
            "Default cleanup policy of topics.",
            ValidList((COMPACT, DELETE)),
            dynamic=_C,
        ),
        _k(
            "log.message.timestamp.type",
            "string",
            CREATE_TIME,
            "Default message.timestamp.type of topics.",
            OneOf((CREATE_TIME, LOG_APPEND_TIME)),
            dynamic=_C,
        ),
        _k(
            "log.message.timestamp.before.max.ms",
            "long",
            INT64_MAX,
            "Oldest CreateTime timestamp accepted, as an age.",
            low=0,
            dynamic=_C,
        ),
        _k(
            "log.message.timestamp.after.max.ms",
            "long",
            3600000,
            "Furthest-ahead CreateTime timestamp accepted.",
            low=0,
            dynamic=_C,
        ),
        _k("log.preallocate", "bool", False, "Preallocate segment files.", applied=False, dynamic=_C),
        _k(
            "log.segment.delete.delay.ms",
            "long",
            60000,
            "Delay before a deleted segment's files go (they go at once).",
            low=0,
            applied=False,
            dynamic=_C,
        ),
        _k(
            "log.local.retention.ms",
            "long",
            -2,
            "Tiered storage: local retention time.",
            low=-2,
            applied=False,
            dynamic=_C,
        ),
        _k(
            "log.local.retention.bytes",
            "long",
            -2,
            "Tiered storage: local retention size.",
            low=-2,
            applied=False,
            dynamic=_C,
        ),
        _k("log.remote.copy.lag.ms", "long", 0, "Tiered storage: copy lag.", low=-1, applied=False, dynamic=_C),
        _k("log.remote.copy.lag.bytes", "long", -1, "Tiered storage: copy lag.", low=-1, applied=False, dynamic=_C),
        _k(
            "log.cleaner.delete.retention.ms",
            "long",
            86400000,
            "Keep tombstones this long in compacted logs.",
            low=0,
            dynamic=_C,
        ),
        _k(
            "log.cleaner.min.compaction.lag.ms",
            "long",
            0,
            "Never compact records younger than this.",
            low=0,
            dynamic=_C,
        ),
        _k(
            "log.cleaner.max.compaction.lag.ms",
            "long",
            INT64_MAX,
            "Compact records older than this (not applied).",
            low=1,
            applied=False,
            dynamic=_C,
        ),
        _k("log.cleaner.enable", "bool", True, "Run the compaction cleaner."),
        _k("log.cleaner.backoff.ms", "long", 15000, "Sleep between cleaner passes.", low=0, dynamic=_C),
        _k(
            "log.cleaner.min.cleanable.ratio",
            "double",
            0.5,
            "Dirty ratio that makes a log cleanable.",
            low=0,
            high=1,
            dynamic=_C,
        ),
        # group coordinator
        _k("group.min.session.timeout.ms", "int", 6000, "Smallest session timeout a member may ask for."),
        _k("group.max.session.timeout.ms", "int", 1800000, "Largest session timeout a member may ask for."),
        _k("group.initial.rebalance.delay.ms", "int", 3000, "Wait for more members before the first rebalance."),
        _k("group.max.size", "int", INT32_MAX, "Members allowed in one group.", low=1),
        _k("offsets.topic.num.partitions", "int", 50, "Partitions of __consumer_offsets.", low=1),
        _k(
            "offsets.topic.replication.factor",
            "short",
            3,
            "Replicas of each __consumer_offsets partition when it is created, at most cluster.nodes (one node: 1).",
            low=1,
        ),
        _k("offsets.topic.segment.bytes", "int", 104857600, "Segment size of __consumer_offsets.", low=1),
        _k("offsets.topic.compression.codec", "int", 0, "Compression of __consumer_offsets batches (0 = none)."),
        _k("offsets.retention.minutes", "int", 10080, "Keep offsets of empty groups this long.", low=1),
        _k("offsets.retention.check.interval.ms", "long", 600000, "How often expired offsets are removed.", low=1),
        _k("offset.metadata.max.bytes", "int", 4096, "Longest commit metadata string."),
        _k("offsets.load.buffer.size", "int", 5242880, "Read size when loading __consumer_offsets.", low=1),
        _k("offsets.commit.timeout.ms", "int", 5000, "Time allowed for an offsets append.", low=1),
        _k(
            "group.coordinator.rebalance.protocols",
            "list",
            "classic,consumer",
            "Group protocols served: classic (JoinGroup/SyncGroup) and consumer (KIP-848 ConsumerGroupHeartbeat).",
        ),
        _k("group.consumer.session.timeout.ms", "int", 45000, "KIP-848 member session timeout.", low=1),
        _k("group.consumer.min.session.timeout.ms", "int", 45000, "Smallest KIP-848 session timeout.", low=1),
        _k("group.consumer.max.session.timeout.ms", "int", 60000, "Largest KIP-848 session timeout.", low=1),
        _k("group.consumer.heartbeat.interval.ms", "int", 5000, "Heartbeat interval given to KIP-848 members.", low=1),
        _k("group.consumer.min.heartbeat.interval.ms", "int", 5000, "Smallest KIP-848 heartbeat interval.", low=1),
        _k("group.consumer.max.heartbeat.interval.ms", "int", 15000, "Largest KIP-848 heartbeat interval.", low=1),
        _k("group.consumer.max.size", "int", INT32_MAX, "Members allowed in one KIP-848 consumer group.", low=1),
        _k(
            "group.consumer.assignment.interval.ms",
            "int",
            1000,
            "Compute a KIP-848 group's target assignment at most this often (the first one at once).",
            low=0,
            dynamic=_C,
            live=False,
        ),
        _k("group.consumer.min.assignment.interval.ms", "int", 0, "Smallest KIP-848 assignment interval.", low=0),
        _k("group.consumer.max.assignment.interval.ms", "int", 15000, "Largest KIP-848 assignment interval.", low=0),
        _k(
            "group.consumer.assignors",
            "list",
            "uniform,range",
            "Server-side assignors members may name (uniform, range); the first is the default.",
        ),
        _k(
            "group.consumer.migration.policy",
            "string",
            "bidirectional",
            "Online migration between classic and consumer groups.",
            choices=("disabled", "upgrade", "downgrade", "bidirectional"),
        ),
        # transaction coordinator
        _k("transaction.state.log.num.partitions", "int", 50, "Partitions of __transaction_state.", low=1),
        _k("transaction.state.log.segment.bytes", "int", 104857600, "Segment size of __transaction_state.", low=1),
        _k("transaction.state.log.load.buffer.size", "int", 5242880, "Read size loading __transaction_state.", low=1),
        _k("transaction.max.timeout.ms", "int", 900000, "Longest transaction timeout a producer may ask for.", low=1),
        _k(
            "transaction.abort.timed.out.transaction.cleanup.interval.ms",
            "int",
            10000,
            "How often transactions past their timeout are aborted (with an epoch bump).",
            low=1,
        ),
        _k(
            "transactional.id.expiration.ms",
            "int",
            604800000,
            "Forget a transactional id after this long without a transaction.",
            low=1,
        ),
        _k(
            "transaction.remove.expired.transaction.cleanup.interval.ms",
            "int",
            3600000,
            "How often expired transactional ids are removed.",
            low=1,
        ),
        _k(
            "transaction.partition.verification.enable",
            "bool",
            True,
            "A transactional produce to a partition not added to the transaction is refused.",
            dynamic=_C,
        ),
        _k(
            "transaction.version",
            "short",
            2,
            "The finalized transaction.version feature level (KIP-890) ApiVersions advertises: at 2 Kafka 4 clients"
            " bump the epoch per transaction and add partitions implicitly, at 0/1 they do not (not a Kafka key:"
            " Kafka sets it with kafka-storage format --feature or kafka-features.sh).",
            low=0,
            high=2,
        ),
        _k(
            "transaction.two.phase.commit.enable",
            "bool",
            False,
            "InitProducerId v6 (KIP-939 two-phase commit) is not served.",
            applied=False,
        ),
        # producer state
        _k(
            "producer.id.expiration.ms",
            "int",
            86400000,
            "Producer state is kept for as long as the log holds the producer's batches.",
            low=1,
            applied=False,
            dynamic=_C,
        ),
        # test and operator tooling (not Kafka settings)
        _k(
            "control.listener",
            "string",
            None,
            "HTTP control API, e.g. http://127.0.0.1:0 or https:// (loopback only without control.listener.token).",
        ),
        _k(
            "control.listener.token",
            "password",
            None,
            "Bearer token every control API request must carry; required to listen beyond loopback.",
        ),
        _k(
            "timeline.max.groups", "int", 1000, "Groups whose rebalance timeline is kept (least recent dropped).", low=1
        ),
        _k("timeline.events.per.group", "int", 500, "Timeline events kept per group (and as many heartbeats).", low=1),
        # authorization (broker/authorization.py): Kafka's StandardAuthorizer, ACLs kept in the data directory
        _k(
            "authorizer.class.name",
            "string",
            "",
            f"Empty: no authorizer (everyone may do everything); {STANDARD_AUTHORIZER}: ACLs.",
        ),
        _k("super.users", "string", "", "Principals allowed everything, `;`-separated (User:admin;User:ops)."),
        _k("allow.everyone.if.no.acl.found", "bool", False, "Allow a resource no ACL applies to (else deny)."),
        # accepted from Kafka's sample files, no effect in this broker
        _k("num.network.threads", "int", 3, "No effect: one event loop.", low=1, applied=False, dynamic=_C),
        _k("num.io.threads", "int", 8, "No effect: one event loop.", low=1, applied=False, dynamic=_C),
        _k("socket.send.buffer.bytes", "int", 102400, "No effect.", applied=False),
        _k("socket.receive.buffer.bytes", "int", 102400, "No effect.", applied=False),
        _k("num.recovery.threads.per.data.dir", "int", 2, "No effect.", low=1, applied=False, dynamic=_C),
        _k(
            "transaction.state.log.replication.factor",
            "short",
            3,
            "Replicas of __transaction_state, capped at `cluster.nodes`.",
            low=1,
        ),
        _k("transaction.state.log.min.isr", "int", 2, "No effect.", applied=False),
        _k("process.roles", "list", "broker,controller", "No effect: one combined node.", applied=False),
        _k("controller.quorum.voters", "list", "", "No effect.", applied=False),
        _k("controller.listener.names", "list", "", "No effect.", applied=False),
        _k("inter.broker.listener.name", "string", "PLAINTEXT", "No effect.", applied=False),
        # TLS (broker/tls.py); each may also be given per listener as `listener.name.<name>.<key>`
        _k("ssl.keystore.type", "string", "JKS", "Only PEM is served; an SSL listener with another type is refused."),
        _k("ssl.keystore.location", "string", None, "PEM file holding the private key and certificate chain."),
        _k("ssl.keystore.password", "password", None, "Not used with PEM (Kafka refuses it there too)."),
        _k("ssl.keystore.certificate.chain", "password", None, "Inline PEM certificate chain (with ssl.keystore.key)."),
        _k("ssl.keystore.key", "password", None, "Inline PEM private key (PKCS#8, encrypted with ssl.key.password)."),
        _k("ssl.key.password", "password", None, "Password of an encrypted private key."),
        _k("ssl.truststore.type", "string", "JKS", "Only PEM is served (needed when clients are authenticated)."),
        _k("ssl.truststore.location", "string", None, "PEM file of the CA certificates trusted for client certs."),
        _k("ssl.truststore.password", "password", None, "Not used with PEM (Kafka refuses it there too)."),
        _k("ssl.truststore.certificates", "password", None, "Inline PEM CA certificates trusted for client certs."),
        _k("ssl.enabled.protocols", "list", "TLSv1.2,TLSv1.3", "TLS versions accepted (TLSv1.2, TLSv1.3)."),
        _k("ssl.protocol", "string", "TLSv1.3", "No effect: ssl.enabled.protocols decides.", applied=False),
        _k("ssl.cipher.suites", "list", "", "Cipher suites (IANA names) for TLS 1.2; empty: OpenSSL's defaults."),
        _k(
            "ssl.client.auth",
            "string",
            "none",
            "Client certificates: none, requested (verified if sent) or required (mutual TLS).",
            choices=("none", "requested", "required"),
        ),
        _k(
            "ssl.principal.mapping.rules",
            "string",
            "DEFAULT",
            "Rules mapping a client certificate's distinguished name to the principal's name (mutual TLS).",
        ),
        _k("ssl.endpoint.identification.algorithm", "string", "https", "No effect on a broker.", applied=False),
        _k("ssl.keymanager.algorithm", "string", "SunX509", "No effect (Java only).", applied=False),
        _k("ssl.trustmanager.algorithm", "string", "PKIX", "No effect (Java only).", applied=False),
        # SASL (broker/sasl_listeners.py); per listener as `listener.name.<name>.<key>`, and the JAAS config and
        # re-authentication also per mechanism as `listener.name.<name>.<mechanism>.<key>`
        _k(
            "sasl.enabled.mechanisms",
            "list",
            "GSSAPI",
            "SASL listeners' mechanisms: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER (GSSAPI is refused).",
        ),
        _k(
            "sasl.jaas.config",
            "password",
            None,
            'Read only as listener.name.<listener>.<mechanism>.sasl.jaas.config (PLAIN\'s user_<name>="<password>").',
        ),
        _k(
            "sasl.server.max.receive.size",
            "int",
            524288,
            "Largest frame a SASL listener reads before authentication; a larger one closes the connection.",
        ),
        _k("sasl.mechanism.inter.broker.protocol", "string", "GSSAPI", "No effect: one broker.", applied=False),
        _k(
            "connections.max.reauth.ms",
            "long",
            0,
            "SASL session lifetime (KIP-368): clients re-authenticate, expired sessions are closed; 0: no limit.",
            low=0,
        ),
    )
}

#: Keys a listener may override with Kafka's `listener.name.<listener>.` prefix (the name in lower case).
PER_LISTENER_PREFIX = "listener.name."
PER_LISTENER_KEYS = frozenset(
    name for name in KEYS if name.startswith("ssl.") or name in ("sasl.enabled.mechanisms", "connections.max.reauth.ms")
)
#: Keys a listener may also set per SASL mechanism: `listener.name.<listener>.<mechanism>.<key>` (lower case).
PER_MECHANISM_KEYS = frozenset({"sasl.jaas.config", "connections.max.reauth.ms"})

# Environment variables of Kafka's launch scripts that are not broker configs (the docker images skip them too).
_ENV_IGNORED = frozenset(
    {"KAFKA_VERSION", "KAFKA_HEAP_OPTS", "KAFKA_OPTS", "KAFKA_JVM_PERFORMANCE_OPTS", "KAFKA_LOG4J_OPTS"}
    | {"KAFKA_JMX_OPTS", "KAFKA_GC_LOG_OPTS", "KAFKA_DEBUG", "KAFKA_HOME", "KAFKA_URI"}
)


def parse_key(key: ConfigKey, text: str) -> Any:
    """The value of ``text`` for ``key``, checked as Kafka checks it (its type's grammar, then its validators);
    InvalidConfigError carries Kafka's message. A list is a Python list without empty entries."""
    value: Any
    if key.choices is not None:  # Kafka's case-insensitive choice
        value = text.strip().lower()
        if value not in key.choices:
            raise InvalidValueError(key.name, text, f"must be one of {', '.join(key.choices)}")
        return value
    value = parse_value(key.config_type, text, key.name)
    for check in key.checks:
        value = check(key.name, value)
    if isinstance(value, tuple):
        return [item for item in value if item]
    return value


def parse_properties(text: str) -> dict[str, str]:
    """Java .properties, the subset Kafka's files use: `key=value` or `key: value`, `#`/`!` comments."""
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        sep = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if sep < 0:
            raise ConfigError(f"cannot parse properties line: {raw!r}")
        values[line[:sep].strip()] = line[sep + 1 :].strip()
    return values


def env_variables(environ: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """KAFKA_GROUP_MAX_SIZE=5 -> {"group.max.size": ("KAFKA_GROUP_MAX_SIZE", "5")}: each key with the variable that
    set it, so an error can name the variable; `__` stands for `_` and `___` for `-` (docker convention)."""
    found: dict[str, tuple[str, str]] = {}
    for name, value in environ.items():
        if not name.startswith("KAFKA_") or name in _ENV_IGNORED:
            continue
        key = name[len("KAFKA_") :].lower().replace("___", "-").replace("__", "\0").replace("_", ".")
        found[key.replace("\0", "_")] = (name, value)
    return found


def env_overrides(environ: Mapping[str, str]) -> dict[str, str]:
    """KAFKA_GROUP_MAX_SIZE=5 -> group.max.size=5 (see `env_variables`)."""
    return {key: value for key, (_, value) in env_variables(environ).items()}


class BrokerConfig:
    """Typed, validated configuration; `config["group.max.size"]` returns the parsed value."""

    def __init__(self, raw: Mapping[str, str] | None = None, origins: Mapping[str, str] | None = None) -> None:
        """`origins` names where a key's text came from ("environment variable KAFKA_X"), for its errors."""
        self._origins = dict(origins or {})
        self._values: dict[str, Any] = {
            name: parse_key(key, key.default) if isinstance(key.default, str) else key.default
            for name, key in KEYS.items()
        }
        self.explicit: dict[str, str] = {}
        for name, text in (raw or {}).items():
            self._set(name, text)
        self._check_relations()

    def _origin(self, name: str) -> str:
        """` (from <where the key's text came from>)` for an error message, or nothing."""
        return f" (from {self._origins[name]})" if name in self._origins else ""

    def _set(self, name: str, text: str) -> None:
        origin = self._origin(name)
        key = KEYS.get(per_listener_base(name) or name)
        if key is None:
            raise ConfigError(f"unknown config key '{name}'{origin}")
        try:
            value = parse_key(key, text)
        except InvalidValueError as exc:
            raise ConfigError(f"invalid value {text!r} for '{name}'{origin}: {exc.reason}") from None
        except InvalidConfigError as exc:
            raise ConfigError(f"invalid value {text!r} for '{name}'{origin}: {exc}") from None
        self._values[name] = value
        self.explicit[name] = text

    def _check_relations(self) -> None:
        try:
            CoordinatorConfig.from_kafka_props(self.coordinator_properties())
            TransactionConfig.from_kafka_props(self.coordinator_properties())
        except CoordinatorConfigError as exc:
            raise ConfigError(str(exc)) from None
        protocols = self.security_protocol_map
        for name in ("listeners", "advertised.listeners"):
            for listener in self[name] or []:
                check_listener_security(listener, name, protocols)
        # Only an explicit advertised.listeners: a wildcard `listeners` without it stays served (see the README).
        check_advertised_names(self.listeners, self.advertised_listeners if self["advertised.listeners"] else [])
        if self[CONTROL_TOKEN] == "":
            raise ConfigError(
                f"invalid value '' for '{CONTROL_TOKEN}'{self._origin(CONTROL_TOKEN)}: an empty token lets anyone in"
            )
        if self["control.listener"]:
            parse_control_listener(self["control.listener"], token=self[CONTROL_TOKEN] is not None)
        if self["authorizer.class.name"] not in ("", STANDARD_AUTHORIZER):
            raise ConfigError(
                f"authorizer.class.name {self['authorizer.class.name']!r} is not served: "
                f"only {STANDARD_AUTHORIZER} (or empty, no authorizer)"
            )

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def listener_values(self, listener: str) -> dict[str, tuple[Any, str]]:
        """Every per-listener key for `listener` as (value, the key it came from): the `listener.name.<name>.`
        override when set, else the broker-wide key, as Kafka's valuesWithPrefixOverride resolves them."""
        prefix = f"{PER_LISTENER_PREFIX}{listener.lower()}."
        return {
            base: (self._values[prefix + base], prefix + base) if prefix + base in self._values else (self[base], base)
            for base in sorted(PER_LISTENER_KEYS)
        }

    def mechanism_value(self, listener: str, mechanism: str, base: str) -> tuple[Any, str]:
        """A per-mechanism key (`listener.name.<listener>.<mechanism>.<base>`) as (value, the key it came from),
        else the listener's or broker's value for keys that have one (Kafka's per-mechanism overrides)."""
        key = f"{PER_LISTENER_PREFIX}{listener.lower()}.{mechanism.lower()}.{base}"
        if key in self._values:
            return self._values[key], key
        if base in PER_LISTENER_KEYS:
            return self.listener_values(listener)[base]
        return None, key

    def items(self) -> Iterable[tuple[str, Any]]:
        return self._values.items()

    # Derived values, resolved as Kafka resolves them.

    def coordinator_properties(self) -> dict[str, str]:
        """The group and transaction coordinators' properties as Kafka-style text (lists comma-joined)."""
        return {
            key: ",".join(value) if isinstance(value, list) else str(value)
            for key in ALL_KAFKA_PROPERTIES
            if (value := self[key]) is not None
        }

    @property
    def node_id(self) -> int:
        broker_id: int = self["broker.id"]
        node_id: int = self["node.id"]
        return broker_id if broker_id >= 0 and "node.id" not in self.explicit else node_id

    @property
    def node_ids(self) -> list[int]:
        """The node ids of the cluster this process runs (`cluster.nodes`): node.id, node.id + 1, ..."""
        return [self.node_id + index for index in range(self["cluster.nodes"])]

    @property
    def log_dir(self) -> Path:
        dirs = self["log.dirs"] if "log.dirs" in self.explicit or "log.dir" not in self.explicit else None
        return Path(dirs[0] if dirs else self["log.dir"][0])

    @property
    def security_protocol_map(self) -> dict[str, str]:
        return parse_security_protocol_map(self["listener.security.protocol.map"])

    @property
    def listeners(self) -> list[tuple[str, str, int]]:
        return [parse_listener(item, "listeners") for item in self["listeners"]]

    @property
    def advertised_listeners(self) -> list[tuple[str, str, int]]:
        items = self["advertised.listeners"]
        if not items:
            return self.listeners
        return [parse_listener(item, "advertised.listeners") for item in items]

    @property
    def retention_ms(self) -> int:
        if self["log.retention.ms"] is not None:
            return int(self["log.retention.ms"])
        if self["log.retention.minutes"] is not None:
            return int(self["log.retention.minutes"]) * 60_000
        return int(self["log.retention.hours"]) * 3_600_000

    @property
    def roll_ms(self) -> int:
        if self["log.roll.ms"] is not None:
            return int(self["log.roll.ms"])
        return int(self["log.roll.hours"]) * 3_600_000


def per_listener_base(name: str) -> str | None:
    """`listener.name.ssl.ssl.client.auth` -> `ssl.client.auth`; None for a key without the listener prefix."""
    if not name.startswith(PER_LISTENER_PREFIX):
        return None
    _, _, rest = name[len(PER_LISTENER_PREFIX) :].partition(".")
    if rest in PER_LISTENER_KEYS:
        return rest
    _, _, per_mechanism = rest.partition(".")
    return per_mechanism if per_mechanism in PER_MECHANISM_KEYS else None


def parse_listener(text: str, key: str) -> tuple[str, str, int]:
    """`PLAINTEXT://127.0.0.1:9092` -> ("PLAINTEXT", "127.0.0.1", 9092); port 0 asks the OS for one."""
    name, sep, rest = text.partition("://")
    host, colon, port = rest.rpartition(":")
    if not sep or not colon or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"invalid value {text!r} for '{key}': expected NAME://host:port")
    return name, host.strip("[]"), int(port)


def parse_security_protocol_map(text: str) -> dict[str, str]:
    """`NAME:PROTOCOL,...` -> {NAME: PROTOCOL}, names upper-cased as Kafka normalises listener names."""
    key = "listener.security.protocol.map"
    mapping: dict[str, str] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, protocol = item.partition(":")
        name, protocol = name.strip().upper(), protocol.strip().upper()
        if not sep or not name:
            raise ConfigError(f"invalid value {text!r} for '{key}': expected NAME:PROTOCOL pairs")
        if protocol not in SECURITY_PROTOCOLS:
            raise ConfigError(
                f"invalid value {text!r} for '{key}': unknown security protocol {protocol!r} "
                f"(Kafka's are {', '.join(SECURITY_PROTOCOLS)})"
            )
        mapping[name] = protocol
    return mapping


def check_listener_security(text: str, key: str, protocols: Mapping[str, str]) -> None:
    """Refuse a listener without a security protocol, rather than serve it as plaintext: Kafka resolves a
    listener's protocol through `listener.security.protocol.map` (whose default maps each protocol name to itself).
    Each protocol's own settings (TLS, SASL) are checked when the broker is built."""
    name = parse_listener(text, key)[0].upper()
    map_key = "listener.security.protocol.map"
    if name not in protocols:
        raise ConfigError(f"'{map_key}' has no security protocol for listener {name} (in '{key}': {text!r})")


def check_advertised_names(bound: Sequence[tuple[str, str, int]], advertised: Sequence[tuple[str, str, int]]) -> None:
    """Kafka's own checks and words (KafkaConfig.validateValues): every advertised name is a bound listener's, and
    no advertised address is the wildcard 0.0.0.0, which a client cannot connect to."""
    names = [name.upper() for name, _, _ in bound]
    unknown = sorted({name.upper() for name, _, _ in advertised} - set(names))
    if unknown:
        raise ConfigError(
            f"advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. "
            f"Found {','.join(unknown)}. The valid options based on the current configuration are {','.join(names)}"
        )
    if any(host == "0.0.0.0" for _, host, _ in advertised):  # noqa: S104 - refusing it, not binding it
        raise ConfigError(
            "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address."
        )


LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost"})


def is_loopback_host(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_control_listener(text: str, token: bool = False) -> tuple[str, int]:
    """`http://127.0.0.1:8080` -> ("127.0.0.1", 8080) (`https://`: served over TLS with the `ssl.*` keys). Without
    `control.listener.token` the control API has no authentication, so it only listens on a loopback address;
    beyond loopback only with a token."""
    scheme, sep, rest = text.strip().partition("://")
    host, colon, port = rest.rstrip("/").rpartition(":")
    host = host.strip("[]")
    if scheme not in ("http", "https") or not sep or not colon or not port.isdigit() or int(port) > 65535 or not host:
        raise ConfigError(f"invalid value {text!r} for 'control.listener': expected http://127.0.0.1:port")
    if not token and not is_loopback_host(host):
        raise ConfigError(
            f"invalid value {text!r} for 'control.listener': without 'control.listener.token' the control API has "
            "no authentication and only listens on a loopback address (127.0.0.1, ::1 or localhost)"
        )
    return host, int(port)


def load_config(
    properties_file: Path | None, overrides: Iterable[str], environ: Mapping[str, str] | None = None
) -> BrokerConfig:
    """Kafka's layering, later wins: defaults < the properties file < `KAFKA_*` environment < `--override`.

    Each key remembers its source, so an error names the file, the variable or `--override` it came from.
    """
    raw: dict[str, str] = {}
    origins: dict[str, str] = {}
    if properties_file is not None:
        for name, value in parse_properties(properties_file.read_text()).items():
            raw[name], origins[name] = value, str(properties_file)
    for name, (variable, value) in env_variables(os.environ if environ is None else environ).items():
        raw[name], origins[name] = value, f"environment variable {variable}"
    for item in overrides:
        name, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--override expects key=value, got {item!r}")
        raw[name.strip()], origins[name.strip()] = value, "--override"
    return BrokerConfig(raw, origins)


def _marks(key: ConfigKey) -> str:
    """How the README's table qualifies a key: no effect here, changeable by AlterConfigs, or not (yet) here."""
    marks = [] if key.applied else ["accepted, no effect"]
    if key.dynamic is not None and key.alterable:
        marks.append("dynamic" if key.dynamic == CLUSTER_WIDE else "dynamic, per broker")
    elif key.dynamic is not None:
        marks.append("dynamic in Kafka, read at startup here")
    return f"({'; '.join(marks)}) " if marks else ""


def markdown_table() -> str:
    """The README's config table, generated from `KEYS` so the documentation cannot drift from the code."""
    rows = ["| key | default | meaning |", "|---|---|---|"]
    for key in KEYS.values():
        default = "" if key.default is None else str(key.default).replace("|", "\\|")
        rows.append(f"| `{key.name}` | {default} | {_marks(key)}{key.doc} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(markdown_table())
