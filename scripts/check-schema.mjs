#!/usr/bin/env node
// npm run schema:check — fails on a breaking change to schema.graphql that SCHEMA_CHANGES.md does not announce.
//
// Compares the working tree's schema.graphql with the one of a base commit (env SCHEMA_BASE, default HEAD~1) using
// `graphql-inspector diff`. A breaking change passes only when the same change adds a line
//   - BREAKING `Type.field`: what changed and what to use instead
// to SCHEMA_CHANGES.md, naming the path graphql-inspector reports (Type, Type.field, Type.field.argument,
// Input.field, Enum.VALUE). Only lines absent from the base's SCHEMA_CHANGES.md count, so an old announcement
// does not cover a new break. The lowering is the custom rule scripts/check-schema.rule.cjs.
//
// Exit codes: 0 no unannounced breaking change (or nothing to compare with); 1 unannounced breaking change;
// 2 the check could not run (unknown SCHEMA_BASE, no schema.graphql in the working tree).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCHEMA = 'schema.graphql';
const CHANGES = 'SCHEMA_CHANGES.md';
const here = dirname(fileURLToPath(import.meta.url));
const inspector = join(here, '..', 'node_modules', '.bin', 'graphql-inspector');
const rule = join(here, 'check-schema.rule.cjs');

const git = (...args) => spawnSync('git', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
const stop = (code, message) => {
  (code === 0 ? console.log : console.error)(`schema:check: ${message}`);
  process.exit(code);
};

/** Paths announced by `- BREAKING \`path\`` list items, one per line, with repeats (code blocks skipped). */
function announcedPaths(markdown) {
  const paths = [];
  let fenced = false;
  for (const line of markdown.split(/\r?\n/)) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const m = fenced ? null : /^\s*[-*]\s+BREAKING\s+`([^`]+)`/.exec(line);
    if (m) paths.push(m[1].trim());
  }
  return paths;
}

/** Announcements in `now` that `before` did not have (as a multiset: a path announced again counts again). */
function newlyAnnounced(now, before) {
  const left = new Map();
  for (const path of before) left.set(path, (left.get(path) ?? 0) + 1);
  const added = [];
  for (const path of now) {
    const n = left.get(path) ?? 0;
    if (n > 0) left.set(path, n - 1);
    else added.push(path);
  }
  return [...new Set(added)];
}

const top = git('rev-parse', '--show-toplevel');
if (top.status !== 0) stop(2, `not in a git repository (${top.stderr.trim()}).`);
const root = top.stdout.trim();

const explicitBase = process.env.SCHEMA_BASE;
const base = explicitBase || 'HEAD~1';
if (git('rev-parse', '--verify', '--quiet', `${base}^{commit}`).status !== 0) {
  if (explicitBase) stop(2, `SCHEMA_BASE=${explicitBase} is not a commit.`);
  stop(0, `note: no ${base} (first commit or shallow clone); nothing to compare with, passing.`);
}
const oldSchema = git('show', `${base}:${SCHEMA}`);
if (oldSchema.status !== 0) stop(0, `note: ${base} has no ${SCHEMA}; nothing to compare with, passing.`);
const newSchemaPath = join(root, SCHEMA);
if (!existsSync(newSchemaPath)) stop(2, `${SCHEMA} is missing from the working tree.`);

const changesPath = join(root, CHANGES);
const now = existsSync(changesPath) ? announcedPaths(readFileSync(changesPath, 'utf8')) : [];
const baseChanges = git('show', `${base}:${CHANGES}`);
const announced = newlyAnnounced(now, baseChanges.status === 0 ? announcedPaths(baseChanges.stdout) : []);

const dir = mkdtempSync(join(tmpdir(), 'schema-check-'));
try {
  const oldSchemaPath = join(dir, `base-${SCHEMA}`);
  writeFileSync(oldSchemaPath, oldSchema.stdout);
  console.log(
    `schema:check: ${SCHEMA} of ${base} -> working tree` +
      (announced.length ? `; announced in ${CHANGES}: ${announced.join(', ')}` : ''),
  );
  const diff = spawnSync(
    inspector,
    [
      'diff',
      oldSchemaPath,
      newSchemaPath,
      // Description edits are never breaking; leaving them out keeps the report to what matters.
      '--rule',
      'ignoreDescriptionChanges',
      '--rule',
      rule,
    ],
    {
      stdio: 'inherit',
      env: { ...process.env, SCHEMA_CHECK_ANNOUNCED: JSON.stringify(announced) },
    },
  );
  if (diff.error) {
    console.error(`schema:check: could not run graphql-inspector: ${diff.error.message}`);
    process.exitCode = 2;
  } else if (diff.status !== 0) {
    console.error(
      `schema:check: unannounced breaking change. If it is intended, add a line "- BREAKING \`<path>\`: <what to do instead>" to ${CHANGES} in the same change.`,
    );
    process.exitCode = diff.status ?? 1;
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
