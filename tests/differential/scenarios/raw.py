"""Hand-built request frames for the scenarios that send what no codec would: unknown keys and versions, bad
sizes, cut bodies. Each helper returns the whole frame (size prefix included) for `Conn.send_frame`."""

from __future__ import annotations

import struct

from protocol import api
from protocol.messages.request_header import RequestHeader

#: Kafka 4.4's API names (clients/.../protocol/ApiKeys.java) for keys the codec has no `ApiKey` for, so the
#: ApiVersions comparison names each API Kafka serves and we do not.
KAFKA_API_NAMES: dict[int, str] = {
    21: "DELETE_RECORDS",
    23: "OFFSET_FOR_LEADER_EPOCH",
    24: "ADD_PARTITIONS_TO_TXN",
    25: "ADD_OFFSETS_TO_TXN",
    26: "END_TXN",
    27: "WRITE_TXN_MARKERS",
    28: "TXN_OFFSET_COMMIT",
    29: "DESCRIBE_ACLS",
    30: "CREATE_ACLS",
    31: "DELETE_ACLS",
    33: "ALTER_CONFIGS",
    34: "ALTER_REPLICA_LOG_DIRS",
    35: "DESCRIBE_LOG_DIRS",
    38: "CREATE_DELEGATION_TOKEN",
    39: "RENEW_DELEGATION_TOKEN",
    40: "EXPIRE_DELEGATION_TOKEN",
    41: "DESCRIBE_DELEGATION_TOKEN",
    43: "ELECT_LEADERS",
    44: "INCREMENTAL_ALTER_CONFIGS",
    45: "ALTER_PARTITION_REASSIGNMENTS",
    46: "LIST_PARTITION_REASSIGNMENTS",
    48: "DESCRIBE_CLIENT_QUOTAS",
    49: "ALTER_CLIENT_QUOTAS",
    50: "DESCRIBE_USER_SCRAM_CREDENTIALS",
    51: "ALTER_USER_SCRAM_CREDENTIALS",
    55: "DESCRIBE_QUORUM",
    57: "UPDATE_FEATURES",
    60: "DESCRIBE_CLUSTER",
    61: "DESCRIBE_PRODUCERS",
    64: "UNREGISTER_BROKER",
    65: "DESCRIBE_TRANSACTIONS",
    66: "LIST_TRANSACTIONS",
    71: "GET_TELEMETRY_SUBSCRIPTIONS",
    72: "PUSH_TELEMETRY",
    74: "LIST_CONFIG_RESOURCES",
    75: "DESCRIBE_TOPIC_PARTITIONS",
    76: "SHARE_GROUP_HEARTBEAT",
    77: "SHARE_GROUP_DESCRIBE",
    78: "SHARE_FETCH",
    79: "SHARE_ACKNOWLEDGE",
    80: "ADD_RAFT_VOTER",
    81: "REMOVE_RAFT_VOTER",
    83: "INITIALIZE_SHARE_GROUP_STATE",
    84: "READ_SHARE_GROUP_STATE",
    85: "WRITE_SHARE_GROUP_STATE",
    86: "DELETE_SHARE_GROUP_STATE",
    87: "READ_SHARE_GROUP_STATE_SUMMARY",
    88: "STREAMS_GROUP_HEARTBEAT",
    89: "STREAMS_GROUP_DESCRIBE",
    90: "DESCRIBE_SHARE_GROUP_OFFSETS",
    91: "ALTER_SHARE_GROUP_OFFSETS",
    92: "DELETE_SHARE_GROUP_OFFSETS",
    93: "STREAMS_GROUP_TOPOLOGY_DESCRIPTION_UPDATE",
    94: "UNREGISTER_CONTROLLER",
}


NO_TAGS = b"\x00"  # an empty tagged-field section: a zero count (unsigned varint)


def sized(payload: bytes, size: int | None = None) -> bytes:
    """``payload`` behind a 4-byte size prefix: its own length, or ``size`` to lie about it."""
    return struct.pack(">i", len(payload) if size is None else size) + payload


def header_bytes(
    api_key: int, version: int, correlation_id: int, client_id: str = "differential", *, flexible: bool
) -> bytes:
    """A request header by hand: v2 (an empty tagged-field section after the client id) when ``flexible``."""
    client = client_id.encode()
    head = struct.pack(">hhih", api_key, version, correlation_id, len(client)) + client
    return head + (NO_TAGS if flexible else b"")


def encoded(api_key: int, version: int, correlation_id: int, body: object) -> bytes:
    """The codec's frame for a request, without its size prefix (to cut or corrupt it)."""
    header = RequestHeader(
        request_api_key=api_key, request_api_version=version, correlation_id=correlation_id, client_id="differential"
    )
    return api.encode_request(header, body)[4:]
