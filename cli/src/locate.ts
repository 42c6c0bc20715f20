// Where a problem the service reports about a model document is in the file: the service names a path into the
// document (`types[1].attributes[3].value_type`); the file's own parse (YAML, which reads JSON too) gives each node's
// offset, and a line counter its line and column, so each problem is shown as a compiler shows one.
import YAML, { isMap, isScalar, isSeq, LineCounter, type Node } from 'yaml';
import { quoted } from './command.js';

/** A problem as the service lists it (DATA.problems of invalid_model and the declaration rules). */
export interface DocumentProblem {
  at: string;
  path: (string | number)[];
  type: string | null;
  attribute: string | null;
  reason: string;
  message: string;
  line?: number;
  column?: number;
}

/**
 * The line and column (1-based) of the node at `path` in the document `text`, or of the deepest node on the way
 * that the file has (a field the file leaves out is shown at its definition); a map's key is shown at the key.
 */
export function locate(
  text: string,
  path: readonly (string | number)[],
): { line: number; column: number } | null {
  const lineCounter = new LineCounter();
  let doc: YAML.Document.Parsed;
  try {
    doc = YAML.parseDocument(text, { lineCounter });
  } catch {
    return null;
  }
  let node: unknown = doc.contents;
  let offset = (node as Node | null)?.range?.[0];
  for (const step of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === step);
      if (!pair) break;
      offset = (pair.key as Node | null)?.range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof step === 'number') {
      const item = node.items[step] as Node | undefined;
      if (!item) break;
      offset = item.range?.[0] ?? offset;
      node = item;
    } else break;
  }
  if (offset === undefined) return null;
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}

/** Each problem located in the file (line and column added), and the lines a compiler would print for them. */
export function problemLines(file: string, text: string, problems: DocumentProblem[], count: number): string {
  const lines = problems.map((p) => {
    const where = locate(text, p.path);
    if (where) Object.assign(p, where);
    const about = [
      p.type !== null ? `type ${quoted(p.type)}` : '',
      p.attribute !== null ? `attribute ${quoted(p.attribute)}` : '',
    ]
      .filter(Boolean)
      .join(', ');
    const place = where ? `${file}:${where.line}:${where.column}` : file;
    return `${place}: ${p.reason}: ${about ? `${about}: ` : ''}${p.message}\n`;
  });
  const more = count > problems.length ? `… and ${count - problems.length} more\n` : '';
  const heading = `${count} problem${count === 1 ? '' : 's'} in ${file}; nothing was done:\n`;
  return `${heading}${lines.join('')}${more}`;
}
