// The `metamodel` commands: their table, the options every command shares, and the help text made from them.

import { attributesChange } from './attribute-change.js';
import { attributesDeclare, attributesList, withdraw } from './attributes.js';
import type { Command, OptionSpec } from './command.js';
import { changes, history } from './history.js';
import { modelApply, modelExport, modelPlan } from './model.js';
import { purge } from './purge.js';
import { tokenCommand } from './token.js';
import {
  typesCreate,
  typesDelete,
  typesDescribe,
  typesList,
  typesReleaseName,
  typesRename,
} from './types.js';

export const DEFAULT_URL = 'http://127.0.0.1:4000';

export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  url: {
    type: 'string',
    value: 'URL',
    help: `service address (default: $METAMODEL_URL, else ${DEFAULT_URL})`,
  },
  token: {
    type: 'string',
    value: 'JWT',
    help: 'bearer token (default: $METAMODEL_TOKEN; prefer the variable, arguments show in ps)',
  },
  json: { type: 'boolean', help: 'print the response DATA as JSON on stdout instead of a table' },
  help: { type: 'boolean', short: 'h', help: 'show help' },
};
export const SERVICE_OPTIONS = new Set(['url', 'token']);

export const COMMANDS: Command[] = [
  typesList,
  typesCreate,
  typesRename,
  typesDescribe,
  typesReleaseName,
  typesDelete,
  attributesList,
  attributesDeclare,
  attributesChange,
  withdraw,
  modelExport,
  modelPlan,
  modelApply,
  history,
  changes,
  purge,
  tokenCommand,
];

export const GROUPS: Record<string, string> = {
  types: 'entity types',
  attributes: 'attribute definitions of a type',
};

export const commandName = (c: Command) => c.path.join(' ');
export const usageLine = (c: Command) =>
  `usage: metamodel ${commandName(c)} ${c.synopsis} [global options]`.trim();

function optionLines(options: Record<string, OptionSpec>): string {
  const rows = Object.entries(options).map(([name, spec]) => {
    const flag = `${spec.short ? `-${spec.short}, ` : ''}--${name}${spec.value ? ` ${spec.value}` : ''}`;
    return [flag, spec.help] as const;
  });
  const width = Math.max(...rows.map(([flag]) => flag.length));
  return rows.map(([flag, help]) => `  ${flag.padEnd(width)}  ${help}`).join('\n');
}

const TYPE_NOTE =
  'TYPE is a type guid or a type name. A name is resolved by the service (GET /entities/types/by-name), compared\n' +
  'trimmed and ignoring letter case; a renamed type is also found by the name it was created under. It is never\n' +
  'created.';

export function commandHelp(c: Command): string {
  const own = Object.keys(c.options).length > 0 ? `\nOptions:\n${optionLines(c.options)}\n` : '';
  const global = Object.fromEntries(
    Object.entries(GLOBAL_OPTIONS).filter(([name]) => c.service || !SERVICE_OPTIONS.has(name)),
  );
  const typeNote = c.args.includes('TYPE') || 'ref-type' in c.options ? `\n${TYPE_NOTE}\n` : '';
  return (
    `${usageLine(c)}\n\n${c.summary}.\n\n${c.description}\n${typeNote}${own}` +
    `\nGlobal options:\n${optionLines(global)}\n\nExamples:\n${c.examples.map((e) => `  ${e}`).join('\n')}\n`
  );
}

function listing(commands: Command[]): string {
  return commands
    .map((c) => {
      const usage = `${commandName(c)} ${c.synopsis}`.trim();
      return `  ${usage}\n      ${c.summary}`;
    })
    .join('\n');
}

export function groupHelp(group: string): string {
  const commands = COMMANDS.filter((c) => c.path[0] === group);
  return (
    `usage: metamodel ${group} <${commands.map((c) => c.path[1]).join('|')}> ... [options]\n\n` +
    `Commands for ${GROUPS[group]}:\n${listing(commands)}\n\nRun \`metamodel ${group} <command> --help\` for its options.\n`
  );
}

export function generalHelp(): string {
  return (
    'usage: metamodel <command> [arguments] [options]\n\n' +
    'Command-line client of the entity metamodel service (its REST API).\n\n' +
    `Commands:\n${listing(COMMANDS)}\n\n${TYPE_NOTE}\n\n` +
    `Global options:\n${optionLines(GLOBAL_OPTIONS)}\n\n` +
    'Exit status: 0 done; 1 the service refused (stderr: "error: <reason>: <message>"; with --json the\n' +
    'refusal DATA goes to stdout too); 2 usage error; 3 the service could not be reached or did not answer\n' +
    'with an envelope; 4 apply: applied, but the tenant does not match the file yet (values being carried,\n' +
    'names being purged). plan exits as terraform plan -detailed-exitcode: 0 no changes, 2 changes, 1 any\n' +
    'error (a usage error included).\n\n' +
    'Run `metamodel <command> --help` (e.g. `metamodel attributes declare --help`) for a command.\n'
  );
}
