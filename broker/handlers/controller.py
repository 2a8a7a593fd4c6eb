"""The KRaft controller's admin APIs, answered as the controller of a one-node cluster answers them: ElectLeaders,
ListPartitionReassignments, AlterPartitionReassignments and DescribeQuorum.

On one node every partition has its only replica as leader, so there is never an election to hold nor a
reassignment in progress, and the only replica set a partition can move to is the one it has. The answers and their
messages are Kafka 4.4's (ReplicationControlManager, KafkaRaftClient), which the differential scenarios compare.
DescribeQuorum reports this node as the leader and only voter of the metadata partition; group-broker keeps no
metadata log, so its offsets are 0 (README, "Differences from Kafka").
"""

from __future__ import annotations

import uuid
from typing import Literal

from broker.clock import BrokerClock
from broker.cluster import ClusterView
from broker.context import RequestContext
from broker.dispatch import Dispatcher
from broker.listeners import current_listener
from protocol.errors import ErrorCode
from protocol.messages.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    ReassignablePartitionResponse,
    ReassignableTopicResponse,
)
from protocol.messages.describe_quorum import (
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    DescribeQuorumResponsePartitionData,
    DescribeQuorumResponseTopicData,
    Listener,
    Node,
    ReplicaState,
)
from protocol.messages.elect_leaders import (
    ElectLeadersRequest,
    ElectLeadersResponse,
    PartitionResult,
    ReplicaElectionResult,
)
from protocol.messages.list_partition_reassignments import (
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
)
from protocol.registry import ApiKey
from storage.log_manager import LogManager

#: ElectionType: PREFERRED (0) and UNCLEAN (1); either finds the leader already in place.
ELECTION_TYPES = (0, 1)
ELECTION_NOT_NEEDED_MESSAGE = "Leader election not needed for topic partition."
#: The KRaft metadata log's partition, the only one DescribeQuorum describes.
METADATA_TOPIC, METADATA_PARTITION = "__cluster_metadata", 0
#: The quorum's epoch: a one-node quorum elects itself once, at epoch 1, and never again.
QUORUM_EPOCH = 1
#: Errors.UNKNOWN_TOPIC_OR_PARTITION.message(), which DescribeQuorum v2 carries for a partition it does not host.
UNKNOWN_PARTITION_MESSAGE = "This server does not host this topic-partition."


class ControllerHandlers:
    """`listener_name` names the listener the cluster view's address belongs to (DescribeQuorum v2's nodes)."""

    def __init__(self, logs: LogManager, cluster: ClusterView, clock: BrokerClock, listener_name: str) -> None:
        self._logs = logs
        self._cluster = cluster
        self._clock = clock
        self._listener_name = listener_name

    def register(self, d: Dispatcher) -> None:
        d.register(ApiKey.ELECT_LEADERS, self.elect_leaders)
        d.register(ApiKey.ALTER_PARTITION_REASSIGNMENTS, self.alter_partition_reassignments)
        d.register(ApiKey.LIST_PARTITION_REASSIGNMENTS, self.list_partition_reassignments)
        d.register(ApiKey.DESCRIBE_QUORUM, self.describe_quorum)

    def _missing(self, topic: str, partition: int) -> Literal["topic", "partition"] | None:
        """What of `topic`-`partition` does not exist, None when it does."""
        info = self._logs.topic(topic)
        if info is None:
            return "topic"
        if not 0 <= partition < info.partitions:
            return "partition"
        return None

    # -- ElectLeaders ------------------------------------------------------------------------------------------

    async def elect_leaders(self, ctx: RequestContext, request: ElectLeadersRequest) -> ElectLeadersResponse:
        """Every named partition that exists already has its leader: ELECTION_NOT_NEEDED. A null topic list means
        every partition, and then Kafka lists each topic with only the partitions that needed an election: none.
        An unknown election type refuses every named partition with INVALID_REQUEST (v1+ also at the top)."""
        if request.election_type not in ELECTION_TYPES:
            message = f"Unknown election type {request.election_type}"
            return ElectLeadersResponse(
                error_code=ErrorCode.INVALID_REQUEST,
                replica_election_results=[
                    ReplicaElectionResult(
                        topic=topic.topic,
                        partition_result=[
                            PartitionResult(partition_id=p, error_code=ErrorCode.INVALID_REQUEST, error_message=message)
                            for p in topic.partitions
                        ],
                    )
                    for topic in request.topic_partitions or []
                ],
            )
        if request.topic_partitions is None:
            return ElectLeadersResponse(
                replica_election_results=[ReplicaElectionResult(topic=info.name) for info in self._logs.topics()]
            )
        return ElectLeadersResponse(
            replica_election_results=[
                ReplicaElectionResult(
                    topic=topic.topic, partition_result=[self._elect(topic.topic, p) for p in topic.partitions]
                )
                for topic in request.topic_partitions
            ]
        )

    def _elect(self, topic: str, partition: int) -> PartitionResult:
        missing = self._missing(topic, partition)
        if missing is None:
            return PartitionResult(
                partition_id=partition,
                error_code=ErrorCode.ELECTION_NOT_NEEDED,
                error_message=ELECTION_NOT_NEEDED_MESSAGE,
            )
        return PartitionResult(
            partition_id=partition,
            error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            error_message=f"No such topic as {topic}"
            if missing == "topic"
            else f"No such partition as {topic}-{partition}",
        )

    # -- Partition reassignments -------------------------------------------------------------------------------

    async def list_partition_reassignments(
        self, ctx: RequestContext, request: ListPartitionReassignmentsRequest
    ) -> ListPartitionReassignmentsResponse:
        """No reassignment is ever in progress; Kafka lists none, and names no unknown topic or partition."""
        return ListPartitionReassignmentsResponse(error_message=None)

    async def alter_partition_reassignments(
        self, ctx: RequestContext, request: AlterPartitionReassignmentsRequest
    ) -> AlterPartitionReassignmentsResponse:
        """Per partition, in Kafka's order: the topic and partition must exist; a null replica list cancels, and
        there is nothing to cancel (NO_REASSIGNMENT_IN_PROGRESS); a replica list must be a valid manual assignment
        (INVALID_REPLICA_ASSIGNMENT), which on one node is only the replica set the partition has, so it is
        accepted and changes nothing. (The replication-factor check of `allow_replication_factor_change=false`
        comes after that one, so it can never fail here.)"""
        return AlterPartitionReassignmentsResponse(
            allow_replication_factor_change=request.allow_replication_factor_change,
            error_message=None,
            responses=[
                ReassignableTopicResponse(
                    name=topic.name,
                    partitions=[self._reassign(topic.name, p.partition_index, p.replicas) for p in topic.partitions],
                )
                for topic in request.topics
            ],
        )

    def _reassign(self, topic: str, partition: int, replicas: list[int] | None) -> ReassignablePartitionResponse:
        answer = ReassignablePartitionResponse(partition_index=partition, error_message=None)
        missing = self._missing(topic, partition)
        if missing is not None:
            answer.error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            answer.error_message = (
                f"Unable to find a topic named {topic}."
                if missing == "topic"
                else f"Unable to find partition {topic}:{partition}."
            )
        elif replicas is None:
            answer.error_code = ErrorCode.NO_REASSIGNMENT_IN_PROGRESS
        elif (invalid := self._invalid_assignment(replicas)) is not None:
            answer.error_code, answer.error_message = ErrorCode.INVALID_REPLICA_ASSIGNMENT, invalid
        return answer

    def _invalid_assignment(self, replicas: list[int]) -> str | None:
        """ReplicationControlManager.validateManualPartitionAssignment: the replicas in id order, each a registered
        broker and none twice; None when valid."""
        if not replicas:
            return "The manual partition assignment includes an empty replica list."
        registered = {node.node_id for node in self._cluster.nodes()}
        previous = None
        for broker in sorted(replicas):
            if broker not in registered:
                return f"The manual partition assignment includes broker {broker}, but no such broker is registered."
            if broker == previous:
                return f"The manual partition assignment includes the broker {broker} more than once."
            previous = broker
        return None

    # -- DescribeQuorum ----------------------------------------------------------------------------------------

    async def describe_quorum(self, ctx: RequestContext, request: DescribeQuorumRequest) -> DescribeQuorumResponse:
        """Exactly one topic and partition may be asked for, the metadata partition; anything else is answered
        UNKNOWN_TOPIC_OR_PARTITION on every partition asked (KafkaRaftClient.handleDescribeQuorumRequest)."""
        asked = [(t.topic_name, p.partition_index) for t in request.topics for p in t.partitions]
        if len(request.topics) != 1 or asked != [(METADATA_TOPIC, METADATA_PARTITION)]:
            v2 = ctx.api_version >= 2
            return DescribeQuorumResponse(
                topics=[
                    DescribeQuorumResponseTopicData(
                        topic_name=t.topic_name,
                        partitions=[
                            DescribeQuorumResponsePartitionData(
                                partition_index=p.partition_index,
                                error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                error_message=UNKNOWN_PARTITION_MESSAGE if v2 else "",
                            )
                            for p in t.partitions
                        ],
                    )
                    for t in request.topics
                ]
            )
        local = self._cluster.local
        now = self._clock.wall_ms()
        voter = ReplicaState(
            replica_id=local.node_id,
            replica_directory_id=uuid.UUID(int=0),  # static voters (controller.quorum.voters) have none
            log_end_offset=0,
            last_fetch_timestamp=now if ctx.api_version >= 1 else -1,  # Kafka reports now for the leader itself
            last_caught_up_timestamp=now if ctx.api_version >= 1 else -1,
        )
        partition = DescribeQuorumResponsePartitionData(
            partition_index=METADATA_PARTITION,
            leader_id=local.node_id,
            leader_epoch=QUORUM_EPOCH,
            high_watermark=0,
            current_voters=[voter],
        )
        response = DescribeQuorumResponse(
            topics=[DescribeQuorumResponseTopicData(topic_name=METADATA_TOPIC, partitions=[partition])]
        )
        if ctx.api_version >= 2:
            listener = Listener(name=current_listener.get() or self._listener_name, host=local.host, port=local.port)
            response.nodes = [Node(node_id=local.node_id, listeners=[listener])]
        return response
