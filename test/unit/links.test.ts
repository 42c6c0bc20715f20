// Every relative link of the repository's Markdown files, and every `<file>.md#<anchor>` a code comment cites, leads
// somewhere: the file is tracked in the repository, and the anchor is a heading of it as GitHub names headings.
// No slugging library is installed (github-slugger is not among the dependencies), so the rules are written here:
// those of github-slugger, which GitHub's own renderer follows.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SELF = 'test/unit/links.test.ts';

/** The slug GitHub gives a heading's text: lower case, punctuation removed except `-` and `_`, spaces to `-`. */
function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** A heading's text as rendered: links reduced to their text, code spans, emphasis and HTML tags dropped. */
function headingText(raw: string): string {
  return raw
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '')
    .replace(/\\(.)/g, '$1')
    .trim();
}

/** Each line outside fenced code blocks, with its number. */
function proseLines(markdown: string): { text: string; line: number }[] {
  const lines: { text: string; line: number }[] = [];
  let fence: string | null = null;
  markdown.split('\n').forEach((text, i) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(text)?.[1];
    if (marker) {
      if (fence === null) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = null;
      return;
    }
    if (fence === null) lines.push({ text, line: i + 1 });
  });
  return lines;
}

/** The anchors of a Markdown file: its ATX headings' slugs, repeats numbered -1, -2, … as GitHub numbers them. */
function anchorsOf(markdown: string): Set<string> {
  const taken = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(text);
    if (heading) {
      const base = slug(headingText(heading[1]!));
      let result = base;
      while (taken.has(result)) {
        const n = taken.get(base)! + 1;
        taken.set(base, n);
        result = `${base}-${n}`;
      }
      taken.set(result, 0);
      anchors.add(result);
    }
    for (const m of text.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
  }
  return anchors;
}

/** The link targets of a Markdown file (inline links, images, reference definitions), outside code. */
function linksOf(markdown: string): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  for (const { text, line } of proseLines(markdown)) {
    const prose = text.replace(/(`+)[\s\S]*?\1/g, '');
    for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ target: m[1]!, line });
    }
    const definition = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(prose);
    if (definition) links.push({ target: definition[1]!, line });
  }
  return links;
}

interface Repo {
  /** Tracked files, relative to the root with `/`. */
  files: ReadonlySet<string>;
  read(file: string): string;
}

function isDirectory(repo: Repo, dir: string): boolean {
  if (dir === '') return true;
  for (const file of repo.files) if (file.startsWith(`${dir}/`)) return true;
  return false;
}

/**
 * Where `target`, cited from `from` (a tracked file, or '' for the root), fails to lead: undefined when it leads
 * somewhere. External targets (a scheme such as http:, https:, mailto:, or //host) are not followed.
 */
function problemOf(
  repo: Repo,
  from: string,
  target: string,
  options: { fromRoot?: boolean; self?: string } = {},
): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return undefined;
  const hash = target.indexOf('#');
  const rawPath = hash === -1 ? target : target.slice(0, hash);
  const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
  let file = from;
  if (rawPath !== '') {
    const decoded = decodeURIComponent(rawPath);
    const base = options.fromRoot || decoded.startsWith('/') ? '' : posix.dirname(from);
    file = posix.normalize(posix.join(base, decoded.replace(/^\/+/, ''))).replace(/\/+$/, '');
    if (file === '.') file = '';
    if (file === '..' || file.startsWith('../')) return `${target}: outside the repository`;
    if (!repo.files.has(file) && !isDirectory(repo, file)) return `${target}: no such file in the repository`;
  }
  if (anchor === undefined || anchor === '') return undefined;
  if (file.endsWith('.md')) {
    const text = rawPath === '' && options.self !== undefined ? options.self : repo.read(file);
    return anchorsOf(text).has(anchor) ? undefined : `${target}: no heading of ${file} has that anchor`;
  }
  // Other files: only GitHub's line anchors (#L10, #L10-L20).
  return /^L\d+(-L\d+)?$/.test(anchor) ? undefined : `${target}: ${file || 'the root'} has no such anchor`;
}

/** Every link of one Markdown file that leads nowhere, as `file:line: problem`. */
function checkMarkdown(repo: Repo, file: string, markdown: string): string[] {
  return linksOf(markdown).flatMap(({ target, line }) => {
    const problem = problemOf(repo, file, target, { self: markdown });
    return problem ? [`${file}:${line}: ${problem}`] : [];
  });
}

/** Every `<path>.md#<anchor>` a source file cites (read from the repository root), as `file:line: problem`. */
function checkCitations(repo: Repo, file: string, source: string): string[] {
  return source.split('\n').flatMap((text, i) =>
    [...text.matchAll(/(?<![\w./-])((?:[\w.-]+\/)*[\w.-]+\.md#[\w-]+)/g)].flatMap((m) => {
      const problem = problemOf(repo, '', m[1]!, { fromRoot: true });
      return problem ? [`${file}:${i + 1}: ${problem}`] : [];
    }),
  );
}

/**
 * Where a text file names a place outside the repository, as `file:line: problem`: a relative path climbing above
 * the repository's root from the file's folder, or the briefs the project was written from (they live beside the
 * checkout, not in it: what they say is stated in docs/, in the project's own words).
 */
function outsideReferences(file: string, text: string): string[] {
  return text.split('\n').flatMap((line, i) => {
    const problems: string[] = [];
    for (const m of line.matchAll(/(?<![\w.])((?:\.\.\/)+)[\w.-]/g)) {
      const resolved = posix.normalize(posix.join(posix.dirname(file), m[1]!, 'x'));
      if (resolved.startsWith('../'))
        problems.push(`${file}:${i + 1}: ${m[1]}…: climbs out of the repository`);
    }
    for (const m of line.matchAll(/\b(shared\/spec|CONTRACT\.md|STYLE\.md)\b/g)) {
      problems.push(`${file}:${i + 1}: ${m[1]}: a brief outside the repository`);
    }
    return problems;
  });
}

function trackedRepo(): Repo {
  const files = new Set(
    execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
      .split('\0')
      .filter((f) => f !== '' && !f.startsWith('node_modules/')),
  );
  const cache = new Map<string, string>();
  return {
    files,
    read(file) {
      let text = cache.get(file);
      if (text === undefined) {
        const full = posix.join(ROOT, file);
        text = existsSync(full) ? readFileSync(full, 'utf8') : '';
        cache.set(file, text);
      }
      return text;
    },
  };
}

function plantedRepo(files: Record<string, string>): Repo {
  return { files: new Set(Object.keys(files)), read: (file) => files[file] ?? '' };
}

describe('slugs of headings, as GitHub makes them', () => {
  it('lower case, punctuation dropped but hyphens and underscores, spaces to hyphens', () => {
    expect(slug('The metamodel as code: export, plan, apply')).toBe(
      'the-metamodel-as-code-export-plan-apply',
    );
    expect(slug(headingText('Purge progress (`Accept: application/x-ndjson`)'))).toBe(
      'purge-progress-accept-applicationx-ndjson',
    );
    expect(slug(headingText('Idempotency-Key: writes safe to retry'))).toBe(
      'idempotency-key-writes-safe-to-retry',
    );
    expect(slug(headingText('The typed client (`client/`)'))).toBe('the-typed-client-client');
    expect(slug('snake_case stays')).toBe('snake_case-stays');
    expect(slug('Straße – Ünïcode')).toBe('straße--ünïcode');
  });

  it('numbers a repeated heading -1, -2, and ignores headings inside code blocks', () => {
    const markdown = '# Examples\n\n## Examples\n\n```sh\n# not a heading\n```\n\n### Examples\n';
    expect([...anchorsOf(markdown)]).toEqual(['examples', 'examples-1', 'examples-2']);
  });
});

describe('the link checker', () => {
  const repo = plantedRepo({
    'README.md': '# Project\n',
    'docs/a.md': '# A\n\n## Real heading\n\n## Real heading\n',
    'src/x.ts': '',
  });

  it('reports a missing file, a missing anchor and a path outside the repository (it can fail)', () => {
    const planted = [
      '# Title',
      '',
      'Good: [a](docs/a.md#real-heading), [again](docs/a.md#real-heading-1), [self](#title), [dir](docs/),',
      '[code](src/x.ts#L3), <https://example.com>, [web](https://example.com/x.md#y), [mail](mailto:a@b.c).',
      'Broken: [gone](docs/missing.md) and [bad anchor](docs/a.md#no-such-heading).',
      '![picture](img/none.png) [up](../elsewhere.md) [self, wrong](#nope)',
      '`[in code](nowhere.md)`',
      '```md',
      '[in a fence](nowhere.md)',
      '```',
      '[ref]: docs/also-missing.md',
    ].join('\n');
    expect(checkMarkdown(repo, 'README.md', planted)).toEqual([
      'README.md:5: docs/missing.md: no such file in the repository',
      'README.md:5: docs/a.md#no-such-heading: no heading of docs/a.md has that anchor',
      'README.md:6: img/none.png: no such file in the repository',
      'README.md:6: ../elsewhere.md: outside the repository',
      'README.md:6: #nope: no heading of README.md has that anchor',
      'README.md:11: docs/also-missing.md: no such file in the repository',
    ]);
  });

  it('resolves links relative to the file that holds them', () => {
    expect(checkMarkdown(repo, 'docs/a.md', '[up](../README.md#project) [here](a.md#a)')).toEqual([]);
    expect(checkMarkdown(repo, 'docs/a.md', '[wrong](README.md)')).toEqual([
      'docs/a.md:1: README.md: no such file in the repository',
    ]);
  });

  it('reports a path climbing out of the repository, and the briefs beside it, in any text (it can fail)', () => {
    const text = [
      "import { x } from '../../src/a.js';",
      'see ../../../elsewhere/notes.txt',
      'the rules of ../shared/CONTRACT.md',
      'fine: ../README.md',
    ].join('\n');
    expect(outsideReferences('test/unit/x.ts', text)).toEqual([
      'test/unit/x.ts:2: ../../../…: climbs out of the repository',
      'test/unit/x.ts:3: CONTRACT.md: a brief outside the repository',
    ]);
    expect(outsideReferences('README.md', 'the rules of ../shared/spec/api.md')).toEqual([
      'README.md:1: ../…: climbs out of the repository',
      'README.md:1: shared/spec: a brief outside the repository',
    ]);
  });

  it('reports a code comment citing an anchor no heading has', () => {
    const source = '// see docs/a.md#real-heading\n// and docs/a.md#gone, README.md#project\n';
    expect(checkCitations(repo, 'src/x.ts', source)).toEqual([
      'src/x.ts:2: docs/a.md#gone: no heading of docs/a.md has that anchor',
    ]);
  });
});

describe("the repository's links", () => {
  const tracked = trackedRepo();

  it('every relative link and image of every tracked Markdown file leads to a tracked file and a heading', () => {
    const markdown = [...tracked.files].filter((f) => f.endsWith('.md'));
    expect(markdown.length).toBeGreaterThan(5);
    expect(markdown.flatMap((file) => checkMarkdown(tracked, file, tracked.read(file)))).toEqual([]);
  });

  it('every <file>.md#<anchor> a source file cites is a heading of that file', () => {
    const sources = [...tracked.files].filter(
      (f) =>
        /^(src|cli|client|test|scripts|bench|deploy)\//.test(f) &&
        /\.(ts|mts|cts|js|mjs|cjs|py|toml|ya?ml|sh|graphql)$/.test(f) &&
        f !== SELF,
    );
    expect(sources.flatMap((file) => checkCitations(tracked, file, tracked.read(file)))).toEqual([]);
  });

  it('no tracked text names a place outside the repository', () => {
    const texts = [...tracked.files].filter(
      (f) =>
        /\.(md|ts|mts|cts|js|mjs|cjs|json|py|toml|ya?ml|sh|graphql|java|xml|txt)$|(^|\/)(Dockerfile|run)$/.test(
          f,
        ) &&
        !/(^|\/)package-lock\.json$/.test(f) &&
        f !== SELF,
    );
    expect(texts.length).toBeGreaterThan(100);
    expect(texts.flatMap((file) => outsideReferences(file, tracked.read(file)))).toEqual([]);
  });
});
