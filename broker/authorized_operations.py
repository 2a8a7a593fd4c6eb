"""The authorized-operations bit fields Kafka 4.4 reports when asked and no authorizer is configured.

Without an authorizer every principal may do everything, so Kafka reports every operation a resource type supports
(`AclEntry.supportedOperations`), as a bit field of `AclOperation` codes. The values below are what the reference
broker answers (the differential scenarios compare them); a request that does not ask gets Kafka's "not asked"
value, `NOT_REQUESTED`. With an authorizer, `broker.access` replaces them by the principal's own
(`AuthHelper.authorizedOperations`) wherever a handler filled them in.
"""

from __future__ import annotations

#: Kafka's `AclOperation` codes.
READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = 3, 4, 5, 6, 7, 8
CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE = 9, 10, 11, 12

#: The schemas' default for an authorized-operations field nobody asked for (Integer.MIN_VALUE).
NOT_REQUESTED = -(2**31)


def bits(*operations: int) -> int:
    """The bit field of `operations`."""
    field = 0
    for operation in operations:
        field |= 1 << operation
    return field


#: A cluster (DescribeCluster, Metadata v8-v10): CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS,
#: ALTER_CONFIGS, IDEMPOTENT_WRITE = 8096.
CLUSTER = bits(CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE)
#: A topic (Metadata v8+, DescribeTopicPartitions): READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS,
#: ALTER_CONFIGS = 3576.
TOPIC = bits(READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS)
