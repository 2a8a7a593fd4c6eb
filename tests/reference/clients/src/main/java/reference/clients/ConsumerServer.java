package reference.clients;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Named KafkaConsumers, each subscribed to one topic in one group, behind a JSON-RPC server on stdin/stdout (see
 * JsonRpc). Usage: ConsumerServer BOOTSTRAP
 *
 * <p>One JVM hosts every consumer of a test, so starting a group member costs no JVM start. A consumer is only
 * touched from the request loop, one call at a time (KafkaConsumer is not thread-safe); with the classic protocol
 * its heartbeats run on the client's own heartbeat thread, so a member that is not being polled stays in the group
 * until max.poll.interval.ms. Ops, each naming the consumer: open {name, group, topic, groupProtocol, and for the
 * classic protocol sessionTimeoutMs, heartbeatIntervalMs; optional isolationLevel}, poll {name, timeoutMs} ->
 * [{partition, offset, key, value}], assignment {name} -> [partition], commit {name} (commitSync), committed {name,
 * partitions} -> {"partition": offset or null}, committedLeaderEpochs {name, partitions} -> {"partition": the
 * committed offset's leader epoch, or null when none was committed or it carries none (KIP-320)}, groupMetadata
 * {name} -> {groupId, generationId, memberId, groupInstanceId} (what a transactional producer sends with the
 * offsets, KIP-447), close {name} (close() sends LeaveGroup).
 */
public final class ConsumerServer {
    private record Member(KafkaConsumer<String, String> consumer, String topic) {}

    private final String bootstrap;
    private final Map<String, Member> members = new LinkedHashMap<>();

    private ConsumerServer(String bootstrap) {
        this.bootstrap = bootstrap;
    }

    public static void main(String[] args) throws Exception {
        ConsumerServer server = new ConsumerServer(args[0]);
        JsonRpc.serve(Map.of(
            "open", server::open,
            "poll", server::poll,
            "assignment", server::assignment,
            "commit", server::commit,
            "committed", server::committed,
            "committedLeaderEpochs", server::committedLeaderEpochs,
            "groupMetadata", server::groupMetadata,
            "close", server::close), server::closeAll);
    }

    private Member member(JsonNode request) {
        return JsonRpc.named(members, request, "consumer");
    }

    private Object open(JsonNode request) {
        String name = JsonRpc.newName(members, request, "consumer");
        Properties config = JsonRpc.clientConfig(bootstrap, name);
        config.put("group.id", request.get("group").asText());
        config.put("group.protocol", request.path("groupProtocol").asText("classic"));
        config.put("auto.offset.reset", "earliest");
        config.put("enable.auto.commit", "false");
        config.put("isolation.level", request.path("isolationLevel").asText("read_uncommitted"));
        // the classic protocol's own timeouts; with group.protocol=consumer the broker decides them (KIP-848)
        if (request.has("sessionTimeoutMs")) {
            config.put("session.timeout.ms", request.get("sessionTimeoutMs").asText());
            config.put("heartbeat.interval.ms", request.get("heartbeatIntervalMs").asText());
        }
        KafkaConsumer<String, String> consumer =
            new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer());
        String topic = request.get("topic").asText();
        consumer.subscribe(List.of(topic));
        members.put(name, new Member(consumer, topic));
        return true;
    }

    private Object poll(JsonNode request) {
        List<Map<String, Object>> records = new ArrayList<>();
        for (ConsumerRecord<String, String> r : member(request).consumer().poll(
                Duration.ofMillis(request.get("timeoutMs").asLong()))) {
            Map<String, Object> record = new LinkedHashMap<>();
            record.put("partition", r.partition());
            record.put("offset", r.offset());
            record.put("key", r.key());
            record.put("value", r.value());
            records.add(record);
        }
        return records;
    }

    private Object assignment(JsonNode request) {
        Member member = member(request);
        return member.consumer().assignment().stream()
            .filter(tp -> tp.topic().equals(member.topic()))
            .map(TopicPartition::partition)
            .sorted()
            .toList();
    }

    private Object commit(JsonNode request) {
        member(request).consumer().commitSync();
        return true;
    }

    private Object committed(JsonNode request) {
        return committedField(request, OffsetAndMetadata::offset);
    }

    private Object committedLeaderEpochs(JsonNode request) {
        return committedField(request, offset -> offset.leaderEpoch().orElse(null));
    }

    /** One field of the committed offset of each partition the request names, by partition; null when none. */
    private Map<String, Object> committedField(JsonNode request, Function<OffsetAndMetadata, Object> field) {
        Member member = member(request);
        Set<TopicPartition> partitions = new HashSet<>();
        request.get("partitions").forEach(p -> partitions.add(new TopicPartition(member.topic(), p.asInt())));
        Map<TopicPartition, OffsetAndMetadata> committed = member.consumer().committed(partitions);
        Map<String, Object> fields = new LinkedHashMap<>();
        for (TopicPartition tp : partitions) {
            OffsetAndMetadata offset = committed.get(tp);
            fields.put(Integer.toString(tp.partition()), offset == null ? null : field.apply(offset));
        }
        return fields;
    }

    private Object groupMetadata(JsonNode request) {
        ConsumerGroupMetadata metadata = member(request).consumer().groupMetadata();
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("groupId", metadata.groupId());
        fields.put("generationId", metadata.generationId());
        fields.put("memberId", metadata.memberId());
        fields.put("groupInstanceId", metadata.groupInstanceId().orElse(null));
        return fields;
    }

    private Object close(JsonNode request) {
        member(request).consumer().close();
        members.remove(request.get("name").asText());
        return true;
    }

    private void closeAll() {
        members.values().forEach(member -> member.consumer().close());
        members.clear();
    }
}
