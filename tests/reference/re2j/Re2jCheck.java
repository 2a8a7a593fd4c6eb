// What Kafka's group coordinator makes of SubscribedTopicRegex patterns, asked of RE2/J itself (the jar Kafka ships).
// Run as a single-file source program: java -cp re2j-<version>.jar Re2jCheck.java < input
// Input: the topic names on the first line, then one pattern per line; every field is Base64 (UTF-8) so that any
// pattern, newlines included, travels intact. Output, one line per pattern: "ERR <Base64 description>" when
// Pattern.compile refuses it, else "OK" followed by the indexes of the topics it matches as a whole.
import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

public class Re2jCheck {
    private static String decode(String field) {
        return new String(Base64.getDecoder().decode(field), StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String header = in.readLine();
        String[] topics = header.isEmpty() ? new String[0] : header.split(" ");
        for (int i = 0; i < topics.length; i++) {
            topics[i] = decode(topics[i]);
        }
        StringBuilder out = new StringBuilder();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            try {
                Pattern pattern = Pattern.compile(decode(line));
                out.append("OK");
                for (int i = 0; i < topics.length; i++) {
                    if (pattern.matcher(topics[i]).matches()) {
                        out.append(' ').append(i);
                    }
                }
            } catch (PatternSyntaxException e) {
                byte[] description = e.getDescription().getBytes(StandardCharsets.UTF_8);
                out.append("ERR ").append(Base64.getEncoder().encodeToString(description));
            }
            out.append('\n');
        }
        System.out.print(out);
    }
}
