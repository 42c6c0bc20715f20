// JSON text to a value, exactly as JSON.parse reads it (RFC 8259: its own whitespace only), prototype keys removed,
// and every string of it well-formed Unicode (model/text.ts).
import sjson from 'secure-json-parse';
import { cutText, refuse } from '../errors.js';
import { illFormedPath } from '../model/text.js';

/** Refuses (invalid_unicode, with its path) a parsed JSON value holding a string that is not well-formed Unicode. */
export function assertWellFormed(value: unknown, what: string) {
  const path = illFormedPath(value);
  if (path === undefined) return;
  const at = cutText(path, 200);
  throw refuse(
    'invalid_unicode',
    `${what} holds a string that is not well-formed Unicode at ${at}: a lone surrogate (an escape such as \\ud800 without its pair) stands for no character.`,
  ).with({ path: at });
}

export const invalidJson = () => refuse('invalid_json', 'The body is not valid JSON.');

/** JSON's own whitespace (RFC 8259): space, tab, line feed, carriage return; no other character is "no body". */
const JSON_WHITESPACE_ONLY = /^[ \t\n\r]*$/;

/** JSON text to a value, with __proto__ and constructor keys removed; a text of JSON whitespace only is undefined. */
export function parseJsonText(text: string): unknown {
  if (JSON_WHITESPACE_ONLY.test(text)) return undefined;
  try {
    // A key __proto__ or constructor is written plainly or with \u escapes: a body with neither is parsed as it is
    // (secure-json-parse searches the whole text with a regular expression, a cost that grows with its length).
    if (!text.includes('\\u') && !text.includes('__proto__') && !text.includes('constructor')) {
      return JSON.parse(text);
    }
    return sjson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' });
  } catch {
    throw invalidJson();
  }
}
