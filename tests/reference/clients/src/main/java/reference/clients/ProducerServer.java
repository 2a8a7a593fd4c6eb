package reference.clients;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A KafkaProducer, and named transactional ones, as a JSON-RPC server on stdin/stdout (see JsonRpc).
 * Usage: ProducerServer BOOTSTRAP
 *
 * <p>send {"topic", "records": [[key, value], ...], "partition"?}: every record sent (to `partition`, or where the
 * key puts it through the client's default partitioner), flushed, and answered with [{partition, offset}, ...] in
 * the order given.
 *
 * <p>openTransactional {name, transactionalId}: a transactional producer, initialised (initTransactions) before the
 * answer. transaction {name, topic, records, offsetsTopic, offsets: {"partition": offset}, group: {groupId,
 * generationId, memberId, groupInstanceId}, commit}: beginTransaction, the records sent and flushed as in send,
 * sendOffsetsToTransaction with that group metadata (a consumer's groupMetadata, from ConsumerServer), then
 * commitTransaction or abortTransaction; answered as send. closeTransactional {name}.
 *
 * <p>clientInstanceId {timeoutMs}: the producer's KIP-714 client instance id (its telemetry subscription's), or null
 * when none was obtained within the timeout (a broker that does not advertise the telemetry APIs).
 */
public final class ProducerServer {
    private static final String TRANSACTION_TIMEOUT_MS = "60000";

    private final String bootstrap;
    private final KafkaProducer<String, String> producer;
    private final Map<String, KafkaProducer<String, String>> transactional = new LinkedHashMap<>();

    private ProducerServer(String bootstrap) {
        this.bootstrap = bootstrap;
        this.producer = newProducer(JsonRpc.clientConfig(bootstrap, "e2e-java-producer"));
    }

    public static void main(String[] args) throws Exception {
        ProducerServer server = new ProducerServer(args[0]);
        JsonRpc.serve(Map.of(
            "send", request -> send(server.producer, request),
            "openTransactional", server::openTransactional,
            "transaction", server::transaction,
            "closeTransactional", server::closeTransactional,
            "clientInstanceId", server::clientInstanceId), server::closeAll);
    }

    private static KafkaProducer<String, String> newProducer(Properties config) {
        config.put("linger.ms", "5");
        return new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
    }

    private static Object send(KafkaProducer<String, String> producer, JsonNode request) throws Exception {
        String topic = request.get("topic").asText();
        Integer partition = request.hasNonNull("partition") ? request.get("partition").asInt() : null;
        List<Future<RecordMetadata>> acks = new ArrayList<>();
        for (JsonNode record : request.get("records")) {
            acks.add(producer.send(
                new ProducerRecord<>(topic, partition, record.get(0).asText(), record.get(1).asText())));
        }
        producer.flush();
        List<Map<String, Object>> acked = new ArrayList<>();
        for (Future<RecordMetadata> ack : acks) {
            RecordMetadata metadata = ack.get();
            Map<String, Object> position = new LinkedHashMap<>();
            position.put("partition", metadata.partition());
            position.put("offset", metadata.offset());
            acked.add(position);
        }
        return acked;
    }

    private KafkaProducer<String, String> named(JsonNode request) {
        return JsonRpc.named(transactional, request, "transactional producer");
    }

    private Object openTransactional(JsonNode request) {
        String name = JsonRpc.newName(transactional, request, "transactional producer");
        Properties config = JsonRpc.clientConfig(bootstrap, name);
        config.put("transactional.id", request.get("transactionalId").asText());
        config.put("transaction.timeout.ms", TRANSACTION_TIMEOUT_MS);
        KafkaProducer<String, String> opened = newProducer(config);
        try {
            opened.initTransactions();
        } catch (RuntimeException e) {
            opened.close();
            throw e;
        }
        transactional.put(name, opened);
        return true;
    }

    private Object transaction(JsonNode request) throws Exception {
        KafkaProducer<String, String> txn = named(request);
        txn.beginTransaction();
        Object acked = send(txn, request);
        String offsetsTopic = request.get("offsetsTopic").asText();
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        request.get("offsets").fields().forEachRemaining(entry -> offsets.put(
            new TopicPartition(offsetsTopic, Integer.parseInt(entry.getKey())),
            new OffsetAndMetadata(entry.getValue().asLong())));
        JsonNode group = request.get("group");
        ConsumerGroupMetadata metadata = new ConsumerGroupMetadata(
            group.get("groupId").asText(),
            group.get("generationId").asInt(),
            group.get("memberId").asText(),
            Optional.ofNullable(group.hasNonNull("groupInstanceId") ? group.get("groupInstanceId").asText() : null));
        txn.sendOffsetsToTransaction(offsets, metadata);
        if (request.get("commit").asBoolean()) {
            txn.commitTransaction();
        } else {
            txn.abortTransaction();
        }
        return acked;
    }

    private Object closeTransactional(JsonNode request) {
        named(request).close();
        transactional.remove(request.get("name").asText());
        return true;
    }

    private Object clientInstanceId(JsonNode request) {
        Uuid id = producer.clientInstanceId(Duration.ofMillis(request.get("timeoutMs").asLong()));
        return id == null ? null : id.toString();
    }

    private void closeAll() {
        transactional.values().forEach(KafkaProducer::close);
        transactional.clear();
        producer.close();
    }
}
