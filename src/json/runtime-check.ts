// The runtime's JSON.parse, checked before the service starts.
//
// The JSON.parse of some V8 versions (those of Node.js 24.21.0 and 26.10.0, among others) reads an object key
// written with escapes as another key of the same length that an earlier parse met at the same place: after
// `{"m":1,"\u005c":1}` (its second key a backslash), `{"m":1,"\u00e9":1}` is read as `{"m":1,"\\":1}`. One tenant's
// body could so change the keys of another tenant's body, and a stored text its keys when read back. Node.js 26.12
// (and 22.23) read both right. The service runs on a runtime that reads them right, or does not start.

/** The smallest case of the fault, on keys no other JSON in the service has. */
const POISON = '{"runtime-check":1,"\\u005c":1}';
const PROBE = '{"runtime-check":1,"\\u00e9":1}';

/** Whether this runtime's JSON.parse reads an escaped key as written, after a parse that would mislead a faulty one. */
export function jsonParseReadsEscapedKeys(): boolean {
  JSON.parse(POISON);
  return Object.keys(JSON.parse(PROBE) as object)[1] === '\u00e9';
}

export const RUNTIME_REFUSAL = `This Node.js (${process.version}) misreads escaped keys in JSON.parse (a V8 fault: an earlier body could change a later body's keys). Run the service on Node.js 26.12 or later (the image's and npm scripts' own is 26.12.1).`;
