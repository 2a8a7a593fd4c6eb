// Kafka's own StandardAuthorizer asked for decisions (differential tests of broker/security/authorizer.py).
// One case per stdin line: allowEveryone|superUsers|acl;acl...|principal,host,operation,resourceType,name
// where an acl is resourceType,name,patternType,principal,host,operation,permission. Prints ALLOWED or DENIED.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.internals.PluginMetricsImpl;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;

public class StandardAuthorizerCheck {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split("\\|", -1);
            StandardAuthorizer authorizer = new StandardAuthorizer();
            Map<String, Object> config = new HashMap<>();
            config.put("allow.everyone.if.no.acl.found", parts[0]);
            config.put("super.users", parts[1]);
            config.put("node.id", "1");
            authorizer.configure(config);
            authorizer.withPluginMetrics(new PluginMetricsImpl(new Metrics(), Map.of()));
            Map<Uuid, StandardAcl> acls = new HashMap<>();
            if (!parts[2].isEmpty()) {
                for (String spec : parts[2].split(";")) {
                    String[] f = spec.split(",", -1);
                    acls.put(Uuid.randomUuid(), new StandardAcl(ResourceType.fromString(f[0]), f[1],
                        PatternType.fromString(f[2]), f[3], f[4], AclOperation.fromString(f[5]),
                        AclPermissionType.fromString(f[6])));
                }
            }
            authorizer.loadSnapshot(acls);
            authorizer.completeInitialLoad();
            String[] q = parts[3].split(",", -1);
            String[] principal = q[0].split(":", 2);
            KafkaPrincipal kafkaPrincipal = new KafkaPrincipal(principal[0], principal[1]);
            InetAddress address = InetAddress.getByName(q[1]);
            AuthorizableRequestContext context = new AuthorizableRequestContext() {
                public String listenerName() { return "PLAINTEXT"; }
                public SecurityProtocol securityProtocol() { return SecurityProtocol.PLAINTEXT; }
                public KafkaPrincipal principal() { return kafkaPrincipal; }
                public InetAddress clientAddress() { return address; }
                public int requestType() { return 3; }
                public int requestVersion() { return 0; }
                public String clientId() { return "check"; }
                public int correlationId() { return 1; }
            };
            Action action = new Action(AclOperation.fromString(q[2]),
                new ResourcePattern(ResourceType.fromString(q[3]), q[4], PatternType.LITERAL), 1, true, true);
            System.out.println(authorizer.authorize(context, List.of(action)).get(0));
        }
    }
}
