// The shape of a JSON body checked as its bytes arrive, before it is parsed: nesting depth and the number of values.
//
// JSON.parse of a hostile body within the 8 MB limit (`[{},{},…]`, millions of objects; or one object with a million
// keys) builds every one of them, filling the heap and blocking the event loop, and every later check pays per
// element. This scanner follows only strings (so brackets inside them do not count), brackets and commas, chunk by
// chunk, and stops the body at the first byte past a limit: what such a body holds is never built. It does not
// validate JSON (JSON.parse does that afterwards, on bodies that passed); on malformed input it only ever counts,
// never throws.
// It also notes where the body's long strings lie (longStrings), so that they can be decoded a slice at a time
// rather than in the one JSON.parse of the whole body (json/long-strings.ts), and where its long arrays lie with
// the commas that cut them into groups of elements (longArrays), so that a body of many small values is parsed a
// group at a time (json/pieces.ts).

import { refuse } from '../errors.js';

/** Deepest nesting of arrays and objects in a body: a client value's 32 levels plus the body's own structure. */
export const MAX_BODY_DEPTH = 40;
/** Most JSON values in one body (array elements and object members, counted as opening brackets and commas). */
export const MAX_BODY_VALUES = 250_000;
/**
 * Most members of one object in a body (counted as its commas, plus one). Every object the API reads is a record of
 * a few fields, or of an entity's values (at most 200 definitions a type, and the platform's attributes): an object
 * of many keys holds the one thread long (zod copies a loose object's unknown keys, and integer-like keys become a
 * sparse array's elements), where the same keys in an array cost nothing.
 */
export const MAX_OBJECT_MEMBERS = 1_000;

export type ShapeViolation = 'depth' | 'values' | 'members';

/** The refusal of a body past a shape limit. */
export const shapeRefusal = (violation: ShapeViolation) =>
  violation === 'depth'
    ? refuse('json_too_deep', `The body nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels.`)
    : violation === 'members'
      ? refuse(
          'json_too_large',
          `An object in the body has more than ${MAX_OBJECT_MEMBERS.toLocaleString('en-US')} members.`,
        )
      : refuse(
          'json_too_large',
          `The body holds more than ${MAX_BODY_VALUES.toLocaleString('en-US')} JSON values.`,
        );

/** Where one string of a body lies: its bytes between the quotes, [start, end), and whether it holds a backslash. */
export interface StringSpan {
  start: number;
  end: number;
  escaped: boolean;
}

/**
 * Where one long array of a body lies: its brackets at `start` and `end`, and the commas between its elements that
 * cut it into groups of at least the scanner's group bytes (at least one: an array that cannot be cut is not one).
 */
export interface ArraySpan {
  start: number;
  end: number;
  cuts: number[];
}

/** The bytes (and UTF-16 units) of JSON's syntax that the scanners here and in json/raw.ts look for. */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const OPEN_ARRAY = 0x5b;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_ARRAY = 0x5d;
export const CLOSE_OBJECT = 0x7d;
export const COMMA = 0x2c;
export const COLON = 0x3a;
/** Bytes of a string looked at one by one before its end is searched for natively. */
const SHORT_STRING = 256;
/** quoteAt before the chunk has been searched for a quote. */
const NOT_SEARCHED = -2;

export class JsonShapeScanner {
  private depth = 0;
  private values = 0;
  /** Per open bracket (by depth): the members counted so far of an object, -1 for an array. */
  private readonly members: number[] = [];
  private inString = false;
  private escaped = false;
  /** Bytes of the body in the chunks before this one. */
  private offset = 0;
  /** Where the string being scanned starts (past its quote), and whether it has had a backslash. */
  private stringStart = 0;
  private stringEscaped = false;
  /** The strings of at least `longStringBytes` bytes, in the order they came. */
  readonly longStrings: StringSpan[] = [];
  /**
   * The arrays of at least `longArrayBytes` bytes that hold no such array themselves (the innermost), in the order
   * they closed; each with its cuts.
   */
  readonly longArrays: ArraySpan[] = [];
  /** Per open array (by depth): where its bracket is, where its current group began, the cuts made so far. */
  private readonly arrayStart: number[] = [];
  private readonly groupFrom: number[] = [];
  private readonly cuts: (number[] | undefined)[] = [];
  /** Per open bracket (by depth): whether a long array was noted inside it. */
  private readonly holdsLong: boolean[] = [];
  /**
   * Per open bracket (by depth): whether it opened where JSON takes a value (the text's start, after `[`, `:`, or a
   * comma in an array). Only such an array is noted: a placeholder stands for a value, and an array where a key goes
   * (`{[…]:1}`, invalid) would be read as the placeholder's string, a valid key.
   */
  private readonly atValue: boolean[] = [];
  /** The last byte outside strings that is not JSON whitespace (a quote for a string); 0 at the start. */
  private last = 0;

  constructor(
    readonly maxDepth = MAX_BODY_DEPTH,
    readonly maxValues = MAX_BODY_VALUES,
    readonly longStringBytes = Number.POSITIVE_INFINITY,
    readonly maxMembers = MAX_OBJECT_MEMBERS,
    /** Arrays at least this long (bytes, brackets included) are noted, cut into groups of at least `groupBytes`. */
    readonly longArrayBytes = Number.POSITIVE_INFINITY,
    readonly groupBytes = Number.POSITIVE_INFINITY,
  ) {}

  /** The bracket at `at` (body offset) closes the one opened at the current depth. */
  private close(at: number, isArray: boolean) {
    const d = this.depth;
    let holds = this.holdsLong[d] === true;
    const cuts = this.cuts[d];
    if (
      isArray &&
      !holds &&
      cuts !== undefined &&
      this.atValue[d] === true &&
      at + 1 - (this.arrayStart[d] as number) >= this.longArrayBytes
    ) {
      this.longArrays.push({ start: this.arrayStart[d] as number, end: at, cuts });
      holds = true;
    }
    if (holds && d > 1) this.holdsLong[d - 1] = true;
    this.holdsLong[d] = false;
    this.cuts[d] = undefined;
  }

  /** The string being scanned ends with the quote at `quote` in the current chunk. */
  private endString(quote: number) {
    this.inString = false;
    const end = this.offset + quote;
    if (end - this.stringStart >= this.longStringBytes) {
      this.longStrings.push({ start: this.stringStart, end, escaped: this.stringEscaped });
    }
  }

  /**
   * The first quote at or after `i` in the chunk being scanned (-1: none to its end), found once per chunk and used
   * again while `i` has not passed it: a long string with a backslash every few hundred bytes would otherwise search
   * to the same quote again after each one.
   */
  private quoteAt = NOT_SEARCHED;

  /** Past the end of the string `chunk` is in at `i` (or to the chunk's end): its next quote, or a backslash before it. */
  private longString(chunk: Uint8Array, i: number): number {
    if (this.quoteAt === NOT_SEARCHED || (this.quoteAt >= 0 && this.quoteAt < i)) {
      this.quoteAt = chunk.indexOf(QUOTE, i);
    }
    const quote = this.quoteAt;
    const end = quote < 0 ? chunk.length : quote;
    const backslash = chunk.subarray(i, end).indexOf(BACKSLASH);
    if (backslash >= 0) {
      this.escaped = true;
      this.stringEscaped = true;
      return i + backslash + 1;
    }
    if (quote >= 0) this.endString(quote);
    return end + (quote >= 0 ? 1 : 0);
  }

  /** Whether a value goes after `before` (the last byte outside strings that is not whitespace) at this depth. */
  private valueGoesHere(before: number): boolean {
    if (before === 0 || before === OPEN_ARRAY || before === COLON) return true;
    return before === COMMA && this.depth > 0 && (this.members[this.depth] ?? 1) < 0;
  }

  /** Scans the next chunk; returns the first limit it passes, or null. */
  push(chunk: Uint8Array): ShapeViolation | null {
    const n = chunk.length;
    let i = 0;
    this.quoteAt = NOT_SEARCHED;
    while (i < n) {
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false;
          i += 1;
          continue;
        }
        // To the end of the string: a plain loop over its first SHORT_STRING bytes (most strings end there, and a
        // loop costs less than a call), then a native search (longString). Either stops at the string's end, so the
        // scan stays linear however many strings a chunk has; a megabyte of padding is passed at memory speed.
        // biome-ignore lint/complexity/useMathMinMax: the ternary is what the door storm was measured with; Math.min here changed the plan shapes' timing (bench/HISTORY.md)
        const stop = i + SHORT_STRING < n ? i + SHORT_STRING : n;
        let c = 0;
        while (i < stop) {
          c = chunk[i] as number;
          i += 1;
          if (c === QUOTE || c === BACKSLASH) break;
        }
        if (c === QUOTE) this.endString(i - 1);
        else if (c === BACKSLASH) {
          this.escaped = true;
          this.stringEscaped = true;
        } else if (i < n) i = this.longString(chunk, i);
        continue;
      }
      const byte = chunk[i] as number;
      const before = this.last;
      if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) {
        this.last = byte;
      }
      switch (byte) {
        case QUOTE:
          this.inString = true;
          this.stringStart = this.offset + i + 1;
          this.stringEscaped = false;
          break;
        case OPEN_ARRAY:
        case OPEN_OBJECT:
          this.atValue[this.depth + 1] = this.valueGoesHere(before);
          this.depth += 1;
          this.values += 1;
          if (this.depth > this.maxDepth) return 'depth';
          if (this.values > this.maxValues) return 'values';
          this.members[this.depth] = byte === OPEN_OBJECT ? 1 : -1;
          if (this.longArrayBytes !== Number.POSITIVE_INFINITY) {
            this.holdsLong[this.depth] = false;
            this.cuts[this.depth] = undefined;
            this.arrayStart[this.depth] = this.offset + i;
            this.groupFrom[this.depth] = this.offset + i + 1;
          }
          break;
        case CLOSE_ARRAY:
        case CLOSE_OBJECT:
          if (this.depth > 0) {
            // An array is noted only where its close is `]` and it opened with `[`: a mismatched bracket is JSON that
            // the parse refuses, in one piece.
            if (this.longArrayBytes !== Number.POSITIVE_INFINITY) {
              this.close(this.offset + i, byte === CLOSE_ARRAY && this.members[this.depth] === -1);
            }
            this.depth -= 1;
          }
          break;
        case COMMA: {
          this.values += 1;
          if (this.values > this.maxValues) return 'values';
          const members = this.members[this.depth] ?? -1;
          if (members >= 0) {
            if (members >= this.maxMembers) return 'members';
            this.members[this.depth] = members + 1;
          } else if (this.longArrayBytes !== Number.POSITIVE_INFINITY && this.depth > 0) {
            const at = this.offset + i;
            if (at - (this.groupFrom[this.depth] as number) >= this.groupBytes) {
              let cuts = this.cuts[this.depth];
              if (cuts === undefined) {
                cuts = [];
                this.cuts[this.depth] = cuts;
              }
              cuts.push(at);
              this.groupFrom[this.depth] = at + 1;
            }
          }
          break;
        }
      }
      i += 1;
    }
    this.offset += n;
    return null;
  }
}
