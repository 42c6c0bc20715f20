// Rewrites the signed jars of the local Neo4j's class path without their signatures, once at install
// (scripts/fetch-neo4j.mjs), before the JVM's archive of classes is trained.
package metamodel;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Enumeration;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;

/**
 * The JVM leaves the classes of a signed jar out of its class-data-sharing archive and ahead-of-time cache, and checks
 * the signature of every entry it reads from one. Neo4j's collections library (eclipse-collections, 12 MB) is signed:
 * at each start its classes were loaded, verified and linked anew, and its 2 MB of signed digests checked (a
 * profile of a start after a crash: a quarter of the main thread's samples). The jars came from Maven Central,
 * checked against its checksums by Maven; the signature adds nothing to a launcher on loopback.
 *
 * <p>For each jar of the directory with signature files: the same entries in the same order, without the signature
 * files, and a manifest of its main section only (the per-entry digests are the signature's); written beside it and
 * moved over it. A jar without signature files is left as it is, so a second run changes nothing.
 */
public final class UnsignJars {
  private UnsignJars() {}

  private static final Pattern SIGNATURE =
      Pattern.compile("META-INF/([^/]+\\.(SF|RSA|DSA|EC)|SIG-[^/]*)", Pattern.CASE_INSENSITIVE);

  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      System.err.println("usage: UnsignJars <directory of jars>");
      System.exit(2);
    }
    int rewritten = 0;
    try (DirectoryStream<Path> jars = Files.newDirectoryStream(Path.of(args[0]), "*.jar")) {
      for (Path jar : jars) {
        if (unsign(jar)) rewritten++;
      }
    }
    System.out.println("UNSIGNED " + rewritten);
  }

  /** Rewrites `jar` without its signature; false when it had none. */
  static boolean unsign(Path jar) throws IOException {
    Path tmp = jar.resolveSibling(jar.getFileName() + ".unsigned.tmp");
    try (ZipFile in = new ZipFile(jar.toFile())) {
      if (in.stream().noneMatch(e -> SIGNATURE.matcher(e.getName()).matches())) return false;
      try (ZipOutputStream out = new ZipOutputStream(Files.newOutputStream(tmp))) {
        Enumeration<? extends ZipEntry> entries = in.entries();
        while (entries.hasMoreElements()) {
          ZipEntry entry = entries.nextElement();
          String name = entry.getName();
          if (SIGNATURE.matcher(name).matches()) continue;
          ZipEntry copy = new ZipEntry(name);
          copy.setTime(entry.getTime());
          out.putNextEntry(copy);
          try (InputStream data = in.getInputStream(entry)) {
            if (JarFile.MANIFEST_NAME.equalsIgnoreCase(name)) mainSection(data, out);
            else data.transferTo(out);
          }
          out.closeEntry();
        }
      }
    }
    Files.move(tmp, jar, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    return true;
  }

  private static void mainSection(InputStream manifest, OutputStream out) throws IOException {
    Manifest main = new Manifest();
    main.getMainAttributes().putAll(new Manifest(manifest).getMainAttributes());
    main.write(out);
  }
}
