// One rule for every string the service reads (a token's claims, a path or query parameter, a header it honours,
// every key and string of a body at any depth): well-formed Unicode, or refused before any use. Neo4j stores
// strings as UTF-8, where a lone surrogate becomes U+FFFD: accepted, two distinct strings would become one (two
// tenants one tenant, a value accepted against an enumeration stored as one it refuses). Identifiers (a tenant, a
// subject, a name) also refuse control characters, and names and reasons the characters no display shows.

// C0 and C1 control characters, which no log, page or display of a name shows as they are.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
export const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Characters no display shows, or that turn the text's direction: Unicode's default-ignorable code points (zero-width
 * spaces and joiners, the soft hyphen, variation selectors, tag characters...), the bidirectional controls among them,
 * every other format character (General_Category Cf), and the characters that show as blank space without being
 * spaces (U+2800 BRAILLE PATTERN BLANK). A name holding one could look like another ("table" + U+200D beside the
 * system type "table").
 */
export const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}\u2800]/u;

/** `U+XXXX`, the usual way to name a code point in a message. */
export const codePointName = (character: string) =>
  `U+${(character.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;

/** Why `text` is no identifier (a tenant, a subject), or undefined when it is one: well-formed, no control character. */
export function identifierProblem(text: string): string | undefined {
  if (!text.isWellFormed()) return 'is not well-formed Unicode (it holds a lone surrogate)';
  const control = CONTROL.exec(text);
  if (control) return `holds a control character (${codePointName(control[0])})`;
  return undefined;
}

/** Why `text` is not displayable text (a name, a change's reason), or undefined: an identifier without invisibles. */
export function displayProblem(text: string): string | undefined {
  const problem = identifierProblem(text);
  if (problem) return problem;
  const hidden = INVISIBLE.exec(text);
  if (hidden) {
    const at = [...text.slice(0, hidden.index)].length + 1;
    return `holds an invisible or direction-changing character (${codePointName(hidden[0])} at character ${at})`;
  }
  return undefined;
}

/**
 * Whether JSON text (as its UTF-8 bytes) may hold an ill-formed string: only a `\u` escape of a surrogate can write
 * one, since the bytes themselves are checked to be UTF-8 (which cannot encode a surrogate). A body without such an
 * escape needs no walk.
 */
export function mayHoldLoneSurrogate(json: Buffer): boolean {
  return json.indexOf('\\ud') >= 0 || json.indexOf('\\uD') >= 0;
}

/** A JSON path for a message: `$`, `$.name`, `$.values[3]`, `$["a b"]`. */
const stepOf = (key: string | number) =>
  typeof key === 'number'
    ? `[${key}]`
    : /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)
      ? `.${key}`
      : `[${JSON.stringify(key.toWellFormed())}]`;

/**
 * Where the first string of a parsed JSON value (a key or a string value, at any depth) that is not well-formed
 * Unicode lies, as a JSON path; undefined when every string is. Recursive: a body's nesting is bounded (json/scan.ts),
 * and the path is only built on the way back from the string found.
 */
export function illFormedPath(value: unknown): string | undefined {
  const steps = illFormedSteps(value);
  return steps === undefined ? undefined : `$${steps.reverse().map(stepOf).join('')}`;
}

function illFormedSteps(v: unknown): (string | number)[] | undefined {
  if (typeof v === 'string') return v.isWellFormed() ? undefined : [];
  if (v === null || typeof v !== 'object') return undefined;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i += 1) {
      const below = illFormedSteps(v[i]);
      if (below) return [...below, i];
    }
    return undefined;
  }
  for (const key of Object.keys(v)) {
    if (!key.isWellFormed()) return [key];
    const below = illFormedSteps((v as Record<string, unknown>)[key]);
    if (below) return [...below, key];
  }
  return undefined;
}
