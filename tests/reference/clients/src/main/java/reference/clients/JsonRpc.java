package reference.clients;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Shared by the client programs the Python end-to-end tests drive (tests/e2e/test_java_client.py), the same
 * protocol as the kafkajs scripts in tests/e2e/js: stdout carries one JSON object per line and nothing else; the
 * client's own log goes to stderr, which the test keeps in a file for failure reports.
 *
 * <p>Requests {"id", "op", ...args} are served one at a time, in order, and answered {"id", "result"} or
 * {"id", "error": {"type": exception class, "message"}}. The error type is the class the Kafka client threw
 * (unwrapped from ExecutionException), so the tests can assert on exactly what an application would catch.
 * Closing stdin runs the program's shutdown and exits 0.
 */
final class JsonRpc {
    static final ObjectMapper JSON = new ObjectMapper();
    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);

    /** One op: the request's arguments in, a JSON-serialisable result out. */
    @FunctionalInterface
    interface Handler {
        Object handle(JsonNode request) throws Exception;
    }

    private JsonRpc() {}

    static void emit(Object message) {
        try {
            String line = JSON.writeValueAsString(message);
            synchronized (OUT) {
                OUT.println(line);
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Client settings common to every program: the bootstrap address and short retries on a local broker. */
    static Properties clientConfig(String bootstrap, String clientId) {
        Properties config = new Properties();
        config.put("bootstrap.servers", bootstrap);
        config.put("client.id", clientId);
        config.put("request.timeout.ms", "10000");
        config.put("retry.backoff.ms", "100");
        config.put("reconnect.backoff.max.ms", "1000");
        return config;
    }

    /** The client a request names ("name") among the open ones; `what` says which kind in the error. */
    static <T> T named(Map<String, T> open, JsonNode request, String what) {
        T found = open.get(request.get("name").asText());
        if (found == null) {
            throw new IllegalArgumentException("no open " + what + " " + request.get("name"));
        }
        return found;
    }

    /** The name a request opens a client under, refused if a client of that name is open. */
    static String newName(Map<String, ?> open, JsonNode request, String what) {
        String name = request.get("name").asText();
        if (open.containsKey(name)) {
            throw new IllegalArgumentException(what + " " + name + " is already open");
        }
        return name;
    }

    static Throwable unwrap(Throwable error) {
        while ((error instanceof ExecutionException || error instanceof CompletionException) && error.getCause() != null) {
            error = error.getCause();
        }
        return error;
    }

    /** Prints {"event": "ready"}, serves requests until stdin closes, then runs `shutdown`. */
    static void serve(Map<String, Handler> handlers, AutoCloseable shutdown) throws Exception {
        emit(Map.of("event", "ready"));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode request = JSON.readTree(line);
            Map<String, Object> reply = new LinkedHashMap<>();
            reply.put("id", request.get("id"));
            String op = request.path("op").asText();
            Handler handler = handlers.get(op);
            try {
                if (handler == null) {
                    throw new IllegalArgumentException("unknown op " + op);
                }
                reply.put("result", handler.handle(request));
            } catch (Exception e) {
                Throwable cause = unwrap(e);
                Map<String, Object> error = new LinkedHashMap<>();
                error.put("type", cause.getClass().getName());
                error.put("message", String.valueOf(cause.getMessage()));
                reply.put("error", error);
            }
            emit(reply);
        }
        shutdown.close();
    }
}
