// What the CLI writes: JSON (--json) or tables (cli-table3), on the streams of an Io.
import Table from 'cli-table3';

export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** Where err() writes; the purge progress bar is drawn on it, and only when it is a terminal (isTTY). */
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  /** Ends `changes --follow` when aborted (a program ends it with Ctrl-C). */
  signal?: AbortSignal;
}

export const processIo = (): Io => ({
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  stderr: process.stderr,
  env: process.env,
});

/** `1 value`, `2 values`; `1 batch`, `2 batches`. */
export const plural = (n: number, word: string) =>
  `${n} ${word}${n === 1 ? '' : /(s|sh|ch|x)$/.test(word) ? 'es' : 's'}`;

export const json = (data: unknown) => `${JSON.stringify(data, null, 2)}\n`;

// Plain borders and headings: no colour codes in files and pipes.
const STYLE = { head: [] as string[], border: [] as string[] };

/** A table with one heading row. */
export function table(head: string[], rows: string[][]): string {
  const t = new Table({ head, style: STYLE, wordWrap: true });
  t.push(...rows);
  return `${t.toString()}\n`;
}

/** A two-column table of field and value, for one record. */
export function record(entries: [string, string][]): string {
  const t = new Table({ style: STYLE, wordWrap: true });
  for (const [key, value] of entries) t.push({ [key]: value });
  return `${t.toString()}\n`;
}

/** A value as one table cell: strings bare, anything else as JSON; absent as empty. */
export function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** An enumeration as one cell: the first entries, then how many more. */
export function listCell(values: unknown, shown = 8): string {
  if (!Array.isArray(values)) return cell(values);
  const head = values.slice(0, shown).map(cell).join(', ');
  return values.length > shown ? `${head} (+${values.length - shown} more)` : head;
}
