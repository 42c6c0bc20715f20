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
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.io.ByteUnit;

public final class LocalNeo4j {
  private LocalNeo4j() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 2 && "--train".equals(args[0])) {
      train(Path.of(args[1]).toAbsolutePath());
      return;
    }
    if (args.length < 2) {
      System.err.println("usage: LocalNeo4j <data-dir> <bolt-port> [--exit-on-stdin-close]");
      System.err.println("       LocalNeo4j --train <empty-dir>");
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

  /**
   * A training run for the JVM's class-data-sharing archive (scripts/fetch-neo4j.mjs runs it once, with
   * -XX:ArchiveClassesAtExit): the database starts as for a real run, plans and runs statements of the kinds the
   * service sends (schema commands, MERGE, keyset pages, subqueries, relationships, deletes), stops, and the JVM
   * writes the classes it loaded to the archive. Later starts map them instead of loading them: Neo4j starts and
   * plans its first statements sooner after a crash.
   */
  private static void train(Path dataDir) throws Exception {
    Files.createDirectories(dataDir);
    DatabaseManagementService dbms =
        new DatabaseManagementServiceBuilder(dataDir)
            .setConfig(BoltConnector.enabled, true)
            .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", 0))
            .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
            .setConfig(HttpConnector.enabled, false)
            .setConfig(HttpsConnector.enabled, false)
            .setConfig(GraphDatabaseSettings.auth_enabled, false)
            .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(64))
            .build();
    GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
    String[] statements = {
      "CREATE CONSTRAINT train_key IF NOT EXISTS FOR (t:Train) REQUIRE (t.tenant, t.key) IS UNIQUE",
      "CREATE CONSTRAINT train_guid IF NOT EXISTS FOR (t:Train) REQUIRE t.guid IS UNIQUE",
      "CREATE INDEX train_of IF NOT EXISTS FOR (x:TrainItem) ON (x.tenant, x.owner, x.key)",
      "CREATE INDEX train_rel IF NOT EXISTS FOR ()-[r:TRAIN_REL]-() ON (r.tgt, r.attr)",
      "CALL db.awaitIndexes(60)",
      "SHOW CONSTRAINTS YIELD name RETURN collect(name) AS names",
      "SHOW INDEXES YIELD name RETURN collect(name) AS names",
      "UNWIND range(0, 99) AS i MERGE (t:Train {tenant: 'a', key: toString(i)})"
          + " ON CREATE SET t.guid = randomUUID(), t.at = datetime(), t.version = 1 RETURN count(t) AS n",
      "MATCH (t:Train) WHERE t.tenant = 'a' AND t.key > '1' WITH t ORDER BY t.tenant, t.key LIMIT 20"
          + " RETURN [t.guid, t.key, t.at] AS row",
      "MATCH (t:Train {tenant: 'a', key: '1'}) UNWIND range(0, 9) AS i"
          + " CREATE (x:TrainItem {tenant: 'a', owner: t.guid, key: toString(i), state: 'live'})"
          + " CREATE (t)-[:TRAIN_REL {tgt: t.guid, attr: 'x', pos: i}]->(x) RETURN count(x) AS n",
      "CALL { MATCH (t:Train {tenant: 'a', key: '2'}) RETURN t, 0 AS rank UNION"
          + " OPTIONAL MATCH (r:Train {tenant: 'a', key: '3'}) WITH coalesce(r.guid, 'none') AS g"
          + " MATCH (t:Train {guid: g}) RETURN t, 1 AS rank } WITH t ORDER BY rank LIMIT 1 RETURN t.key AS key",
      "MATCH (t:Train {tenant: 'a', key: '1'}) CALL { WITH t OPTIONAL MATCH (t)-[r:TRAIN_REL]->(x:TrainItem)"
          + " WHERE x.state = 'live' WITH x ORDER BY x.key RETURN [y IN collect(x {.key, .state}) WHERE y IS NOT NULL]"
          + " AS items } RETURN t {.guid, .key} AS type, items, size(items) AS n,"
          + " CASE WHEN t.version IS NULL THEN 0 ELSE t.version END AS version",
      "MATCH (t:Train {tenant: 'a'}) WHERE exists { (t)-[:TRAIN_REL]->() } SET t.version = coalesce(t.version, 0) + 1"
          + " WITH t FOREACH (_ IN CASE WHEN t.key = '1' THEN [1] ELSE [] END | MERGE (z:TrainItem {tenant: 'a',"
          + " owner: 'z', key: 'z'})) RETURN count(t) AS n",
      "OPTIONAL MATCH (k:TrainItem {tenant: 'a', owner: 'z', key: 'z'}) WITH k WHERE k IS NOT NULL"
          + " DETACH DELETE k RETURN count(*) AS n",
      "MATCH (t:Train) WHERE t.tenant = 'a' DETACH DELETE t",
      "MATCH (x:TrainItem) DETACH DELETE x",
    };
    for (int round = 0; round < 3; round++) {
      for (String statement : statements) {
        db.executeTransactionally(statement);
      }
    }
    dbms.shutdown();
    System.out.println("NEO4J_TRAINED");
    System.exit(0);
  }
}
