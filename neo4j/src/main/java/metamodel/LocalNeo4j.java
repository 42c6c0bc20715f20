// Starts an embedded Neo4j Community database with Bolt on loopback, for local runs and tests only.
package metamodel;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.ByteUnit;

public final class LocalNeo4j {
  private LocalNeo4j() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      System.err.println("usage: LocalNeo4j <data-dir> <bolt-port> [--exit-on-stdin-close]");
      System.exit(2);
    }
    Path dataDir = Path.of(args[0]).toAbsolutePath();
    int port = Integer.parseInt(args[1]);
    boolean watchStdin = args.length > 2 && "--exit-on-stdin-close".equals(args[2]);
    long pageCacheMb = Long.parseLong(System.getProperty("neo4j.pagecache.mb", "512"));
    // Further Neo4j settings as system properties, -Dneo4j.setting.<name>=<value> (neo4j.conf's names and syntax),
    // read by Neo4j from a file in the data directory written for this start.
    List<String> settings = new ArrayList<>();
    for (String key : System.getProperties().stringPropertyNames()) {
      if (key.startsWith("neo4j.setting.")) {
        settings.add(key.substring("neo4j.setting.".length()) + "=" + System.getProperty(key));
      }
    }
    Files.createDirectories(dataDir);
    Path conf = Files.write(dataDir.resolve("local-neo4j.conf"), settings);

    DatabaseManagementService dbms =
        new DatabaseManagementServiceBuilder(dataDir)
            .setConfig(BoltConnector.enabled, true)
            .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
            .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
            .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
            .setConfig(HttpConnector.enabled, false)
            .setConfig(HttpsConnector.enabled, false)
            // Loopback only, throwaway or developer data: no credentials to manage.
            .setConfig(GraphDatabaseSettings.auth_enabled, false)
            .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(pageCacheMb))
            .setConfig(GraphDatabaseSettings.shutdown_transaction_end_timeout, Duration.ofSeconds(5))
            .loadPropertiesFromFile(conf)
            .build();

    Thread hook = new Thread(() -> {
      dbms.shutdown();
      System.out.println("NEO4J_STOPPED");
      System.out.flush();
    }, "neo4j-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);

    System.out.println("NEO4J_READY bolt://127.0.0.1:" + port);
    System.out.flush();

    if (watchStdin) {
      // The parent holds our stdin; when it dies without stopping us, stdin closes and we stop too.
      InputStream in = System.in;
      try {
        while (in.read() != -1) {
          // ignore input
        }
      } catch (IOException ignored) {
        // parent gone
      }
      System.exit(0);
    } else {
      Thread.currentThread().join();
    }
  }
}
