package reference.clients;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A KafkaProducer as a JSON-RPC server on stdin/stdout (see JsonRpc). Usage: ProducerServer BOOTSTRAP
 *
 * <p>send {"topic", "records": [[key, value], ...]}: every record sent (the key picks the partition through the
 * client's default partitioner), flushed, and answered with [{partition, offset}, ...] in the order given.
 */
public final class ProducerServer {
    private ProducerServer() {}

    public static void main(String[] args) throws Exception {
        Properties config = JsonRpc.clientConfig(args[0], "e2e-java-producer");
        config.put("linger.ms", "5");
        KafkaProducer<String, String> producer =
            new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
        JsonRpc.serve(Map.of("send", request -> send(producer, request)), producer);
    }

    private static Object send(KafkaProducer<String, String> producer, JsonNode request) throws Exception {
        String topic = request.get("topic").asText();
        List<Future<RecordMetadata>> acks = new ArrayList<>();
        for (JsonNode record : request.get("records")) {
            acks.add(producer.send(new ProducerRecord<>(topic, record.get(0).asText(), record.get(1).asText())));
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
}
