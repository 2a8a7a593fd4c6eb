package reference.clients;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListConsumerGroupsOptions;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.MemberAssignment;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.RaftVoterEndpoint;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.acl.AclOperation;

/**
 * The Java AdminClient as a JSON-RPC server on stdin/stdout (see JsonRpc). Usage: AdminServer BOOTSTRAP
 *
 * <p>Each op is one AdminClient call, answered with what the client returned, flattened to JSON:
 * createTopic, listGroups (listConsumerGroups), listAllGroups (listGroups, KIP-1043), describeGroup
 * (describeConsumerGroups), deleteGroup (deleteConsumerGroups), alterOffsets (alterConsumerGroupOffsets), listOffsets
 * (listConsumerGroupOffsets), deleteOffsets (deleteConsumerGroupOffsets). Partition maps are keyed by the partition
 * number as a string. Both list ops take an optional "types" filter (["classic", "consumer", ...]), which the client
 * sends as ListGroups v5's TypesFilter.
 *
 * <p>The cluster ops (issue #16): describeCluster {authorizedOperations?}, describeTopics {topics, pageSize?,
 * authorizedOperations?} (DescribeTopicPartitions, `pageSize` partitions per request), electLeaders {type, topic,
 * partitions}, describeMetadataQuorum, listPartitionReassignments {topic?, partitions?} and
 * alterPartitionReassignments {topic, replicas: {"partition": [ids] or null to cancel}}. Per-partition and per-topic
 * failures are answered as the exception's class name in place of the value; nodes as {id, host, port, rack}.
 */
public final class AdminServer {
    private final Admin admin;

    private AdminServer(Admin admin) {
        this.admin = admin;
    }

    public static void main(String[] args) throws Exception {
        Admin admin = Admin.create(JsonRpc.clientConfig(args[0], "e2e-java-admin"));
        AdminServer server = new AdminServer(admin);
        Map<String, JsonRpc.Handler> handlers = new HashMap<>();
        handlers.put("createTopic", server::createTopic);
        handlers.put("listGroups", server::listGroups);
        handlers.put("listAllGroups", server::listAllGroups);
        handlers.put("describeGroup", server::describeGroup);
        handlers.put("deleteGroup", server::deleteGroup);
        handlers.put("alterOffsets", server::alterOffsets);
        handlers.put("listOffsets", server::listOffsets);
        handlers.put("deleteOffsets", server::deleteOffsets);
        handlers.put("describeCluster", server::describeCluster);
        handlers.put("describeTopics", server::describeTopics);
        handlers.put("electLeaders", server::electLeaders);
        handlers.put("describeMetadataQuorum", server::describeMetadataQuorum);
        handlers.put("listPartitionReassignments", server::listPartitionReassignments);
        handlers.put("alterPartitionReassignments", server::alterPartitionReassignments);
        JsonRpc.serve(handlers, admin);
    }

    private Object createTopic(JsonNode request) throws Exception {
        NewTopic topic = new NewTopic(request.get("topic").asText(), request.get("partitions").asInt(), (short) 1);
        admin.createTopics(List.of(topic)).all().get();
        return true;
    }

    @SuppressWarnings("deprecation") // listConsumerGroups is the call the brief is about; listGroups supersedes it
    private Object listGroups(JsonNode request) throws Exception {
        List<Map<String, Object>> groups = new ArrayList<>();
        ListConsumerGroupsOptions options = new ListConsumerGroupsOptions().withTypes(types(request));
        for (ConsumerGroupListing listing : admin.listConsumerGroups(options).all().get()) {
            Map<String, Object> group = new LinkedHashMap<>();
            group.put("groupId", listing.groupId());
            group.put("simple", listing.isSimpleConsumerGroup());
            group.put("state", listing.groupState().map(Object::toString).orElse(null));
            group.put("type", listing.type().map(Object::toString).orElse(null));
            groups.add(group);
        }
        return groups;
    }

    /** Every group the brokers know, of any protocol type, as Admin.listGroups reports it. */
    private Object listAllGroups(JsonNode request) throws Exception {
        List<Map<String, Object>> groups = new ArrayList<>();
        for (GroupListing listing : admin.listGroups(new ListGroupsOptions().withTypes(types(request))).all().get()) {
            Map<String, Object> group = new LinkedHashMap<>();
            group.put("groupId", listing.groupId());
            group.put("type", listing.type().map(Object::toString).orElse(null));
            group.put("protocol", listing.protocol());
            group.put("state", listing.groupState().map(Object::toString).orElse(null));
            groups.add(group);
        }
        return groups;
    }

    /** The request's "types" filter (absent: every type). */
    private static Set<GroupType> types(JsonNode request) {
        Set<GroupType> types = new HashSet<>();
        request.path("types").forEach(type -> types.add(GroupType.parse(type.asText())));
        return types;
    }

    /** {"topic": [partition, ...]}, partitions sorted. */
    private static Map<String, List<Integer>> byTopic(MemberAssignment assignment) {
        Map<String, List<Integer>> partitions = new LinkedHashMap<>();
        for (TopicPartition tp : assignment.topicPartitions()) {
            partitions.computeIfAbsent(tp.topic(), t -> new ArrayList<>()).add(tp.partition());
        }
        partitions.values().forEach(list -> list.sort(null));
        return partitions;
    }

    /** The description; the epochs and target assignments only a consumer group (ConsumerGroupDescribe) has are
     * null for a classic one. */
    private Object describeGroup(JsonNode request) throws Exception {
        String groupId = request.get("group").asText();
        ConsumerGroupDescription description = admin.describeConsumerGroups(List.of(groupId)).all().get().get(groupId);
        Map<String, Object> group = new LinkedHashMap<>();
        group.put("groupId", description.groupId());
        group.put("simple", description.isSimpleConsumerGroup());
        group.put("state", description.groupState().toString());
        group.put("type", description.type().toString());
        group.put("partitionAssignor", description.partitionAssignor());
        group.put("groupEpoch", description.groupEpoch().orElse(null));
        group.put("targetAssignmentEpoch", description.targetAssignmentEpoch().orElse(null));
        Node coordinator = description.coordinator();
        group.put("coordinator", coordinator == null ? null
            : Map.of("id", coordinator.id(), "host", coordinator.host(), "port", coordinator.port()));
        List<Map<String, Object>> members = new ArrayList<>();
        for (MemberDescription member : description.members()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("memberId", member.consumerId());
            m.put("clientId", member.clientId());
            m.put("host", member.host());
            m.put("instanceId", member.groupInstanceId().orElse(null));
            m.put("assignment", byTopic(member.assignment()));
            m.put("targetAssignment", member.targetAssignment().map(AdminServer::byTopic).orElse(null));
            m.put("memberEpoch", member.memberEpoch().orElse(null));
            m.put("upgraded", member.upgraded().orElse(null));
            members.add(m);
        }
        group.put("members", members);
        return group;
    }

    private Object deleteGroup(JsonNode request) throws Exception {
        admin.deleteConsumerGroups(List.of(request.get("group").asText())).all().get();
        return true;
    }

    /** {"group", "topic", "offsets": {"partition": offset}} */
    private Object alterOffsets(JsonNode request) throws Exception {
        String topic = request.get("topic").asText();
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        request.get("offsets").fields().forEachRemaining(entry -> offsets.put(
            new TopicPartition(topic, Integer.parseInt(entry.getKey())), new OffsetAndMetadata(entry.getValue().asLong())));
        admin.alterConsumerGroupOffsets(request.get("group").asText(), offsets).all().get();
        return true;
    }

    /** The group's committed offsets of one topic: {"partition": offset}; partitions without a commit left out. */
    private Object listOffsets(JsonNode request) throws Exception {
        String topic = request.get("topic").asText();
        Map<TopicPartition, OffsetAndMetadata> committed =
            admin.listConsumerGroupOffsets(request.get("group").asText()).partitionsToOffsetAndMetadata().get();
        Map<String, Long> offsets = new LinkedHashMap<>();
        committed.entrySet().stream()
            .filter(e -> e.getKey().topic().equals(topic) && e.getValue() != null)
            .sorted(Map.Entry.comparingByKey((a, b) -> Integer.compare(a.partition(), b.partition())))
            .forEach(e -> offsets.put(Integer.toString(e.getKey().partition()), e.getValue().offset()));
        return offsets;
    }

    /** {"group", "topic", "partitions": [..]} */
    private Object deleteOffsets(JsonNode request) throws Exception {
        String topic = request.get("topic").asText();
        Set<TopicPartition> partitions = new HashSet<>();
        request.get("partitions").forEach(p -> partitions.add(new TopicPartition(topic, p.asInt())));
        admin.deleteConsumerGroupOffsets(request.get("group").asText(), partitions).all().get();
        return true;
    }

    private static Map<String, Object> node(Node node) {
        if (node == null) {
            return null;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("id", node.id());
        out.put("host", node.host());
        out.put("port", node.port());
        out.put("rack", node.rack());
        return out;
    }

    private static List<Integer> ids(List<Node> nodes) {
        return nodes == null ? null : nodes.stream().map(Node::id).toList();
    }

    /** Sorted operation names, or null when they were not asked for. */
    private static List<String> operations(Set<AclOperation> operations) {
        return operations == null ? null : operations.stream().map(Enum::name).sorted().toList();
    }

    /** The class of the exception a future failed with, or null when it succeeded. */
    private static String failure(KafkaFuture<?> future) {
        try {
            future.get();
            return null;
        } catch (Exception e) {
            return JsonRpc.unwrap(e).getClass().getName();
        }
    }

    private static Set<TopicPartition> partitions(JsonNode request) {
        Set<TopicPartition> partitions = new HashSet<>();
        request.path("partitions").forEach(p -> partitions.add(new TopicPartition(request.get("topic").asText(), p.asInt())));
        return partitions;
    }

    private Object describeCluster(JsonNode request) throws Exception {
        boolean asked = request.path("authorizedOperations").asBoolean(false);
        DescribeClusterResult result = admin.describeCluster(new DescribeClusterOptions().includeAuthorizedOperations(asked));
        Map<String, Object> cluster = new LinkedHashMap<>();
        cluster.put("clusterId", result.clusterId().get());
        cluster.put("controller", node(result.controller().get()));
        cluster.put("nodes", result.nodes().get().stream().map(AdminServer::node).toList());
        cluster.put("authorizedOperations", operations(result.authorizedOperations().get()));
        return cluster;
    }

    /** {"topic": {topicId, internal, partitions: [{partition, leader, replicas, isr, elr, lastKnownElr}],
     * authorizedOperations} or the exception's class name}. */
    private Object describeTopics(JsonNode request) throws Exception {
        List<String> names = new ArrayList<>();
        request.get("topics").forEach(t -> names.add(t.asText()));
        DescribeTopicsOptions options = new DescribeTopicsOptions()
            .includeAuthorizedOperations(request.path("authorizedOperations").asBoolean(false));
        if (request.has("pageSize")) {
            options.partitionSizeLimitPerResponse(request.get("pageSize").asInt());
        }
        Map<String, KafkaFuture<TopicDescription>> described =
            admin.describeTopics(TopicCollection.ofTopicNames(names), options).topicNameValues();
        Map<String, Object> topics = new TreeMap<>();
        for (Map.Entry<String, KafkaFuture<TopicDescription>> entry : described.entrySet()) {
            String failed = failure(entry.getValue());
            if (failed != null) {
                topics.put(entry.getKey(), failed);
                continue;
            }
            TopicDescription description = entry.getValue().get();
            Map<String, Object> topic = new LinkedHashMap<>();
            topic.put("topicId", description.topicId().toString());
            topic.put("internal", description.isInternal());
            List<Map<String, Object>> partitions = new ArrayList<>();
            for (TopicPartitionInfo info : description.partitions()) {
                Map<String, Object> partition = new LinkedHashMap<>();
                partition.put("partition", info.partition());
                partition.put("leader", info.leader() == null ? null : info.leader().id());
                partition.put("replicas", ids(info.replicas()));
                partition.put("isr", ids(info.isr()));
                partition.put("elr", ids(info.elr()));
                partition.put("lastKnownElr", ids(info.lastKnownElr()));
                partitions.add(partition);
            }
            topic.put("partitions", partitions);
            topic.put("authorizedOperations", operations(description.authorizedOperations()));
            topics.put(entry.getKey(), topic);
        }
        return topics;
    }

    /** {"partition": exception class or null}, for a PREFERRED or UNCLEAN election of the named partitions. */
    private Object electLeaders(JsonNode request) throws Exception {
        ElectionType type = ElectionType.valueOf(request.get("type").asText());
        Map<TopicPartition, Optional<Throwable>> elected = admin.electLeaders(type, partitions(request)).partitions().get();
        Map<String, String> results = new TreeMap<>();
        elected.forEach((tp, error) ->
            results.put(Integer.toString(tp.partition()), error.map(e -> e.getClass().getName()).orElse(null)));
        return results;
    }

    private static Map<String, Object> replica(QuorumInfo.ReplicaState state) {
        Map<String, Object> replica = new LinkedHashMap<>();
        replica.put("replicaId", state.replicaId());
        replica.put("logEndOffset", state.logEndOffset());
        replica.put("lastFetchTimestamp", state.lastFetchTimestamp().isPresent() ? state.lastFetchTimestamp().getAsLong() : null);
        replica.put("lastCaughtUpTimestamp",
            state.lastCaughtUpTimestamp().isPresent() ? state.lastCaughtUpTimestamp().getAsLong() : null);
        return replica;
    }

    private Object describeMetadataQuorum(JsonNode request) throws Exception {
        QuorumInfo info = admin.describeMetadataQuorum().quorumInfo().get();
        Map<String, Object> quorum = new LinkedHashMap<>();
        quorum.put("leaderId", info.leaderId());
        quorum.put("leaderEpoch", info.leaderEpoch());
        quorum.put("highWatermark", info.highWatermark());
        quorum.put("voters", info.voters().stream().map(AdminServer::replica).toList());
        quorum.put("observers", info.observers().stream().map(AdminServer::replica).toList());
        Map<String, Object> nodes = new TreeMap<>();
        info.nodes().forEach((id, node) -> {
            List<Map<String, Object>> endpoints = new ArrayList<>();
            for (RaftVoterEndpoint endpoint : node.endpoints()) {
                endpoints.add(Map.of("name", endpoint.name(), "host", endpoint.host(), "port", endpoint.port()));
            }
            nodes.put(Integer.toString(id), endpoints);
        });
        quorum.put("nodes", nodes);
        return quorum;
    }

    /** [{topic, partition, replicas, adding, removing}] of the reassignments in progress (all, or the named ones). */
    private Object listPartitionReassignments(JsonNode request) throws Exception {
        Map<TopicPartition, PartitionReassignment> listed = request.has("topic")
            ? admin.listPartitionReassignments(partitions(request)).reassignments().get()
            : admin.listPartitionReassignments().reassignments().get();
        List<Map<String, Object>> reassignments = new ArrayList<>();
        listed.forEach((tp, reassignment) -> {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("topic", tp.topic());
            entry.put("partition", tp.partition());
            entry.put("replicas", reassignment.replicas());
            entry.put("adding", reassignment.addingReplicas());
            entry.put("removing", reassignment.removingReplicas());
            reassignments.add(entry);
        });
        return reassignments;
    }

    /** {"partition": exception class or null} for {topic, replicas: {"partition": [ids] or null (cancel)}}. */
    private Object alterPartitionReassignments(JsonNode request) throws Exception {
        String topic = request.get("topic").asText();
        Map<TopicPartition, Optional<NewPartitionReassignment>> wanted = new HashMap<>();
        request.get("replicas").fields().forEachRemaining(entry -> {
            TopicPartition tp = new TopicPartition(topic, Integer.parseInt(entry.getKey()));
            if (entry.getValue().isNull()) {
                wanted.put(tp, Optional.empty());
            } else {
                List<Integer> replicas = new ArrayList<>();
                entry.getValue().forEach(id -> replicas.add(id.asInt()));
                wanted.put(tp, Optional.of(new NewPartitionReassignment(replicas)));
            }
        });
        Map<String, String> results = new TreeMap<>();
        admin.alterPartitionReassignments(wanted).values().forEach((tp, future) ->
            results.put(Integer.toString(tp.partition()), failure(future)));
        return results;
    }
}
