"""What group-broker advertises in ApiVersions against what Kafka 4.4 does: one pinned difference per API, each with
the issue that closes it (or why it stays), so the list visibly shrinks as later issues land."""

from __future__ import annotations

from tests.differential.registry import Known

MISSING = "<missing>"
SECURITY = "Delegation tokens are not served (SASL PLAIN, SCRAM and OAUTHBEARER are; README, Security)."
SHARE = "Share groups (KIP-932) are not planned."
STREAMS = "Streams groups (KIP-1071) are not planned."
CLUSTER = "Multi-node, quota and KRaft controller administration are not planned for a single-node broker."

#: API name -> (group-broker's range, Kafka's range, why): the ApiVersions v3 answer, compared per API, in the order
#: the comparison finds them: the APIs group-broker serves in its order, then those only Kafka serves.
RANGES: dict[str, tuple[str, str, str]] = {
    "PRODUCE": (
        "3-13",
        "0-13",
        "Kafka 4 advertises v0-2 only for a librdkafka bug (KAFKA-18659) and refuses them; group-broker does not.",
    ),
    "LIST_OFFSETS": (
        "0-11",
        "1-11",
        "v0, which Kafka 4 removed (KIP-896), is still served: Burrow 1.2.1 (Debian's) asks for topic ends with it.",
    ),
    "WRITE_TXN_MARKERS": (MISSING, "1-2", "Broker-to-broker: a single node writes its transaction markers itself."),
    "ALTER_REPLICA_LOG_DIRS": (MISSING, "1-2", CLUSTER),
    "CREATE_DELEGATION_TOKEN": (MISSING, "1-3", SECURITY),
    "RENEW_DELEGATION_TOKEN": (MISSING, "1-2", SECURITY),
    "EXPIRE_DELEGATION_TOKEN": (MISSING, "1-2", SECURITY),
    "DESCRIBE_DELEGATION_TOKEN": (MISSING, "1-3", SECURITY),
    "DESCRIBE_CLIENT_QUOTAS": (MISSING, "0-1", CLUSTER),
    "ALTER_CLIENT_QUOTAS": (MISSING, "0-1", CLUSTER),
    "UPDATE_FEATURES": (MISSING, "0-2", CLUSTER),
    "UNREGISTER_BROKER": (MISSING, "0-0", CLUSTER),
    "SHARE_GROUP_HEARTBEAT": (MISSING, "1-1", SHARE),
    "SHARE_GROUP_DESCRIBE": (MISSING, "1-1", SHARE),
    "SHARE_FETCH": (MISSING, "1-2", SHARE),
    "SHARE_ACKNOWLEDGE": (MISSING, "1-2", SHARE),
    "ADD_RAFT_VOTER": (MISSING, "0-1", CLUSTER),
    "REMOVE_RAFT_VOTER": (MISSING, "0-0", CLUSTER),
    "INITIALIZE_SHARE_GROUP_STATE": (MISSING, "0-0", SHARE),
    "READ_SHARE_GROUP_STATE": (MISSING, "0-0", SHARE),
    "WRITE_SHARE_GROUP_STATE": (MISSING, "0-1", SHARE),
    "DELETE_SHARE_GROUP_STATE": (MISSING, "0-0", SHARE),
    "READ_SHARE_GROUP_STATE_SUMMARY": (MISSING, "0-1", SHARE),
    "STREAMS_GROUP_HEARTBEAT": (MISSING, "0-1", STREAMS),
    "STREAMS_GROUP_DESCRIBE": (MISSING, "0-1", STREAMS),
    "DESCRIBE_SHARE_GROUP_OFFSETS": (MISSING, "0-1", SHARE),
    "ALTER_SHARE_GROUP_OFFSETS": (MISSING, "0-0", SHARE),
    "DELETE_SHARE_GROUP_OFFSETS": (MISSING, "0-0", SHARE),
    "STREAMS_GROUP_TOPOLOGY_DESCRIPTION_UPDATE": (MISSING, "0-0", STREAMS),
    "UNREGISTER_CONTROLLER": (MISSING, "0-0", CLUSTER),
}

NO_FEATURES = "group-broker is not a KRaft node: it has no feature levels, and no client needs one for what it serves."

#: (path, Kafka's value, why) for the feature levels Kafka reports and group-broker does not.
FEATURES: tuple[tuple[str, object, str], ...] = (
    ("supported features.metadata.version", "7-33", NO_FEATURES),
    ("finalized features.group.version", 1, NO_FEATURES + " The consumer group protocol is served regardless."),
    ("finalized features.streams.version", 1, STREAMS),
    ("finalized features.eligible.leader.replicas.version", 1, CLUSTER),
    ("finalized features.share.version", 2, SHARE),
    ("finalized features.metadata.version", 33, NO_FEATURES),
)

ADVERTISED: tuple[Known, ...] = tuple(
    Known(f"ranges.{name}", ours, kafka, why) for name, (ours, kafka, why) in RANGES.items()
) + tuple(Known(path, MISSING, kafka, why) for path, kafka, why in FEATURES)
