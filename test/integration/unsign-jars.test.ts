// The install rewrites the signed jars of the local Neo4j's class path without their signatures
// (neo4j/src/main/java/metamodel/UnsignJars.java, run by scripts/fetch-neo4j.mjs), so that the JVM archives their
// classes: a jar signed here with the JDK's own tools comes out unsigned with the same entries and bytes, a jar that
// was not signed is left as it was, a second run changes nothing; and the install's class path holds no signed jar.
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateRawSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { jvmLaunch } from '../../src/db/local-neo4j.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TARGET = path.join(ROOT, 'neo4j', 'target');
const SIGNATURE = /^META-INF\/([^/]+\.(SF|RSA|DSA|EC)|SIG-[^/]*)$/i;

/** The entries of a zip file, from its central directory, each with its bytes (stored or deflated) when `bytes`. */
function entries(file: string, bytes = true): Map<string, Buffer> {
  const zip = readFileSync(file);
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const out = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    const method = zip.readUInt16LE(at + 10);
    const size = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const skip = nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    const local = zip.readUInt32LE(at + 42);
    const data = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const raw = zip.subarray(data, data + size);
    out.set(name, !bytes ? Buffer.alloc(0) : method === 0 ? Buffer.from(raw) : inflateRawSync(raw));
    at += 46 + skip;
  }
  return out;
}

const signatureFiles = (jar: string) =>
  [...entries(jar, false).keys()].filter((name) => SIGNATURE.test(name));

const launch = jvmLaunch();
/** The JDK's tools beside the Java the install chose (on the PATH when it chose `java`). */
const tool = (name: string) => (launch.java === 'java' ? name : path.join(path.dirname(launch.java), name));
const built = existsSync(path.join(TARGET, 'classes', 'metamodel', 'UnsignJars.class'));

const unsign = (dir: string) =>
  execFileSync(tool('java'), ['-cp', path.join(TARGET, 'classes'), 'metamodel.UnsignJars', dir], {
    encoding: 'utf8',
  }).trim();

describe.runIf(built)('unsigning the local Neo4j class path', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'unsign-jars-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('rewrites a signed jar without its signature, keeps every other entry and an unsigned jar as they were', () => {
    const content = path.join(dir, 'content');
    mkdirSync(path.join(content, 'pkg'), { recursive: true });
    writeFileSync(path.join(content, 'a.txt'), 'first entry\n');
    writeFileSync(
      path.join(content, 'pkg', 'b.bin'),
      Buffer.from(Array.from({ length: 4096 }, (_, i) => i % 251)),
    );
    const jars = path.join(dir, 'jars');
    mkdirSync(jars);
    const signed = path.join(jars, 'signed.jar');
    const plain = path.join(jars, 'plain.jar');
    execFileSync(tool('jar'), ['cf', signed, '-C', content, '.']);
    cpSync(signed, plain);
    const store = path.join(dir, 'keys.p12');
    const secret = ['-storepass', 'unsign-test'];
    execFileSync(
      tool('keytool'),
      [
        '-genkeypair',
        '-keystore',
        store,
        ...secret,
        '-alias',
        'test',
        '-dname',
        'CN=unsign test',
        '-keyalg',
        'EC',
        '-validity',
        '2',
      ],
      { stdio: 'ignore' },
    );
    execFileSync(tool('jarsigner'), ['-keystore', store, ...secret, signed, 'test'], { stdio: 'ignore' });
    const before = entries(signed);
    expect(signatureFiles(signed).length).toBeGreaterThan(0);
    expect(before.get('META-INF/MANIFEST.MF')?.toString()).toMatch(/^Name: a\.txt/m);
    const plainBytes = readFileSync(plain);

    expect(unsign(jars)).toBe('UNSIGNED 1');

    const after = entries(signed);
    expect(signatureFiles(signed)).toEqual([]);
    expect([...after.keys()]).toEqual([...before.keys()].filter((name) => !SIGNATURE.test(name)));
    for (const [name, bytes] of after) {
      if (name !== 'META-INF/MANIFEST.MF') expect(bytes.equals(before.get(name) as Buffer)).toBe(true);
    }
    // the manifest keeps its main section, without the per-entry digests
    const manifest = after.get('META-INF/MANIFEST.MF')?.toString() ?? '';
    expect(manifest).toMatch(/^Manifest-Version: 1\.0/);
    expect(manifest).not.toMatch(/^Name:/m);
    expect(execFileSync(tool('jarsigner'), ['-verify', signed], { encoding: 'utf8' })).toMatch(
      /jar is unsigned/,
    );
    expect(readFileSync(plain).equals(plainBytes)).toBe(true);

    // a second run finds nothing to do
    const once = readFileSync(signed);
    expect(unsign(jars)).toBe('UNSIGNED 0');
    expect(readFileSync(signed).equals(once)).toBe(true);
  });

  it("leaves no signed jar on the install's class path (neo4j/target/lib)", () => {
    const lib = path.join(TARGET, 'lib');
    const jars = readdirSync(lib).filter((name) => name.endsWith('.jar'));
    expect(jars.length).toBeGreaterThan(100);
    expect(jars.filter((jar) => signatureFiles(path.join(lib, jar)).length > 0)).toEqual([]);
  });
});
