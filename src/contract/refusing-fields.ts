// The fields whose rules the contract states for documents and editors: how a field's schema failure maps to its
// refusal reason (the routes' validation reads it), and what a name must look like, as a pattern any regex engine
// reads the same. The service's own checks, with their distinct reasons, are in model/names.ts.
import { z } from 'zod';
import type { Reason } from '../errors.js';
import { MAX_NAME_LENGTH, nameKey } from '../model/names.js';
import { PLATFORM_ATTRIBUTE_NAMES } from '../model/system-types.js';
import { INVISIBLE } from '../model/text.js';

/**
 * The refusal a field's schema failure maps to: `reason` when the value is wrong, `missing` when absent/null,
 * `tooMany` when a list is longer than its maximum (checked before its elements, so a long list costs nothing).
 */
export interface FieldRefusals {
  reason?: Reason;
  missing?: Reason;
  tooMany?: Reason;
}
export const refusals = z.registry<FieldRefusals>();

/** A field refused with `reason` when malformed (and with `missing` when absent or null, if given). */
export const refusing = <T extends z.ZodType>(schema: T, meta: FieldRefusals): T => {
  refusals.add(schema, meta);
  return schema;
};

/**
 * What a name must look like, for the document only (the service's own checks, with their distinct reasons, are in
 * model/names.ts): once the spaces JavaScript's trim() removes are gone, 1 to 256 characters, the first and last
 * not spaces, no C0/C1 control characters and no invisible or direction-changing ones (those outside the BMP are
 * refused too; the pattern leaves them to the service). Every class is spelled out, so that it means the same to any
 * regex engine (a fuzzer's included).
 */
const NAME_SPACE =
  '\\t\\n\\u000b\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
/** The invisible and direction-changing characters of the BMP a name may not hold (model/names.ts), as ranges. */
function invisibleRanges(): string {
  const hex = (c: number) => `\\u${c.toString(16).padStart(4, '0')}`;
  const ranges: string[] = [];
  let start: number | null = null;
  for (let code = 0; code <= 0x10000; code += 1) {
    const hidden =
      code < 0x10000 && (code < 0xd800 || code > 0xdfff) && INVISIBLE.test(String.fromCharCode(code));
    if (hidden && start === null) start = code;
    if (!hidden && start !== null) {
      ranges.push(start === code - 1 ? hex(start) : `${hex(start)}-${hex(code - 1)}`);
      start = null;
    }
  }
  return ranges.join('');
}
const NAME_CONTROL = `\\u0000-\\u001f\\u007f-\\u009f${invisibleRanges()}`;
const NAME_EDGE = `[^${NAME_CONTROL}${NAME_SPACE}]`;
export const NAME_DOC = {
  minLength: 1,
  pattern: `^[${NAME_SPACE}]*${NAME_EDGE}(?:[^${NAME_CONTROL}]{0,${MAX_NAME_LENGTH - 2}}${NAME_EDGE})?[${NAME_SPACE}]*$`,
};
/** A character for a regex, as `\uXXXX` outside ASCII letters and digits so the document stays plain ASCII. */
const regexChar = (ch: string) =>
  /^[a-zA-Z0-9]$/.test(ch) ? ch : `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Every BMP character whose key (nameKey) is plain ASCII letters, by that key (scanned once, at load). */
const ASCII_FOLDS = new Map<string, string[]>();
for (let code = 0; code <= 0xffff; code += 1) {
  if (code >= 0xd800 && code <= 0xdfff) continue;
  const ch = String.fromCharCode(code);
  const folded = nameKey(ch);
  if (/^[a-z]+$/.test(folded)) ASCII_FOLDS.set(folded, [...(ASCII_FOLDS.get(folded) ?? []), ch]);
}

/**
 * A pattern matching exactly the names whose key (nameKey: upper- then lower-cased) is `key`, when `key` is plain
 * ASCII letters: every character folding to a letter or a run of letters (the long s, the dotless i, the sharp s
 * for "ss", the fi ligature...) is spelled out, since the service compares keys, not spellings.
 */
function keyPattern(key: string): string {
  const from = (i: number): string => {
    if (i === key.length) return '';
    const branches: string[] = [];
    for (const [folded, chars] of ASCII_FOLDS) {
      if (!key.startsWith(folded, i)) continue;
      const rest = from(i + folded.length);
      const here = chars.map(regexChar).join(folded.length === 1 ? '' : '|');
      branches.push(folded.length === 1 ? `[${here}]${rest}` : `(?:${here})${rest}`);
    }
    return branches.length === 1 ? (branches[0] as string) : `(?:${branches.join('|')})`;
  };
  return from(0);
}

/**
 * The names of the platform attributes (domain, env, tags, classification, groups) as the service reads a name:
 * trimmed, letter case and case folds ignored. Withdrawing one is refused (base_type_not_owner), so the withdraw
 * path's name says `not` these.
 */
export const PLATFORM_NAME_DOC = {
  pattern: `^[${NAME_SPACE}]*(?:${[...PLATFORM_ATTRIBUTE_NAMES].map(keyPattern).join('|')})[${NAME_SPACE}]*$`,
};

/** A name field: absent or null is empty_value, anything but a string invalid_field (the rest in cleanName). */
export const nameField = (description: string) =>
  refusing(z.string().describe(description).meta(NAME_DOC), {
    reason: 'invalid_field',
    missing: 'empty_value',
  });

export const typeName = nameField('Type name (trimmed; letter case ignored when compared).');
