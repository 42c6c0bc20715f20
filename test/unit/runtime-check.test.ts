// The runtime the service runs on reads escaped JSON keys as written (V8's fault in Node.js 24.21 and 26.10 reads
// one as the key an earlier parse met at the same place; the service refuses to start on such a runtime).
import { describe, expect, it } from 'vitest';
import { jsonParseReadsEscapedKeys, RUNTIME_REFUSAL } from '../../src/json/runtime-check.js';

describe('runtime check', () => {
  it('this runtime’s JSON.parse reads escaped keys after keys that mislead a faulty one, and the check says so', () => {
    expect(jsonParseReadsEscapedKeys()).toBe(true);
    // The shapes of the fault, each after its misleading parse: the key as written, every time.
    const cases: [string, string, string][] = [
      ['{"x1":1,"\\u005c":1}', '{"x1":1,"\\ud83d":2}', '\ud83d'],
      ['{"x2":1,"\\u005cu":2}', '{"x2":1,"\\ud83b\\udd3a":2}', '\u{1ed3a}'],
      ['{"x3":1,"\\\\u":2}', '{"x3":1,"\\u000a\\u0009":2}', '\n\t'],
      ['{"x4":{"a":1,"\\u005cu00":1}}', '{"x4":{"a":1,"\\u00e9tat":1}}', 'état'],
    ];
    for (const [misleading, text, key] of cases) {
      JSON.parse(misleading);
      const parsed = JSON.parse(text) as Record<string, unknown>;
      const inner = (parsed.x4 as Record<string, unknown> | undefined) ?? parsed;
      expect(Object.keys(inner)[1]).toBe(key);
    }
    expect(RUNTIME_REFUSAL).toMatch(/Node\.js 26\.12 or later/);
  });
});
