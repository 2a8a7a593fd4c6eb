package reference.clients;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListConsumerGroupsOptions;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.MemberAssignment;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;

/**
 * The Java AdminClient as a JSON-RPC server on stdin/stdout (see JsonRpc). Usage: AdminServer BOOTSTRAP
 *
 * <p>Each op is one AdminClient call, answered with what the client returned, flattened to JSON:
 * createTopic, listGroups (listConsumerGroups), listAllGroups (listGroups, KIP-1043), describeGroup
 * (describeConsumerGroups), deleteGroup (deleteConsumerGroups), alterOffsets (alterConsumerGroupOffsets), listOffsets
 * (listConsumerGroupOffsets), deleteOffsets (deleteConsumerGroupOffsets). Partition maps are keyed by the partition
 * number as a string. Both list ops take an optional "types" filter (["classic", "consumer", ...]), which the client
 * sends as ListGroups v5's TypesFilter.
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
}
