// `metamodel`: the command-line client of the metamodel service's REST API (cli/bin/metamodel.mjs runs this).
// Exit status: 0 done; 1 the service refused; 2 usage error; 3 no usable answer (unreachable, not an envelope);
// 4 apply done as far as it can be, the tenant not matching the file yet (carries, purges).

import { type ParseArgsConfig, parseArgs } from 'node:util';
import { attributesChange } from './attribute-change.js';
import { attributesDeclare, attributesList, withdraw } from './attributes.js';
import { Client, Refusal, TransportError, UsageError } from './client.js';
import type { Command, Ctx, OptionSpec, Values } from './command.js';
import { changes, history } from './history.js';
import { modelApply, modelExport, modelPlan } from './model.js';
import { type Io, json, processIo } from './output.js';
import { purge } from './purge.js';
import { tokenCommand } from './token.js';
import { TypeResolver } from './type-resolver.js';
import { typesCreate, typesList } from './types.js';

export const DEFAULT_URL = 'http://127.0.0.1:4000';

export const EXIT = { ok: 0, refused: 1, usage: 2, unreachable: 3, waiting: 4 } as const;

const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
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
const SERVICE_OPTIONS = new Set(['url', 'token']);

export const COMMANDS: Command[] = [
  typesList,
  typesCreate,
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

const GROUPS: Record<string, string> = {
  types: 'entity types',
  attributes: 'attribute definitions of a type',
};

const commandName = (c: Command) => c.path.join(' ');
const usageLine = (c: Command) => `usage: metamodel ${commandName(c)} ${c.synopsis} [global options]`.trim();

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

function commandHelp(c: Command): string {
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

function groupHelp(group: string): string {
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
    'names being purged).\n\n' +
    'Run `metamodel <command> --help` (e.g. `metamodel attributes declare --help`) for a command.\n'
  );
}

/** Every option any command takes, for the one parseArgs pass (an option means the same wherever it is used). */
function parseConfig(): NonNullable<ParseArgsConfig['options']> {
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const source of [GLOBAL_OPTIONS, ...COMMANDS.map((c) => c.options)]) {
    for (const [name, spec] of Object.entries(source)) {
      options[name] = {
        type: spec.type,
        ...(spec.multiple ? { multiple: true } : {}),
        ...(spec.short ? { short: spec.short } : {}),
      };
    }
  }
  return options;
}

/** The command the leading words name, if any. */
function findCommand(words: string[]): Command | undefined {
  return COMMANDS.find((c) => c.path.every((word, i) => words[i] === word));
}

/** Usage text for whatever the words start to name (for a usage error before the command is known). */
function usageFor(words: string[]): string {
  const command = findCommand(words);
  if (command) return usageLine(command);
  if (words[0] !== undefined && words[0] in GROUPS) return groupHelp(words[0]).split('\n')[0]!;
  return 'usage: metamodel <command> [arguments] [options]   (metamodel --help lists the commands)';
}

interface Parsed {
  values: Values;
  positionals: string[];
  /** The options as given, in order (to check each applies to the command). */
  given: { name: string; rawName: string }[];
}

function parse(argv: string[]): Parsed {
  try {
    const { values, positionals, tokens } = parseArgs({
      args: argv,
      options: parseConfig(),
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
    const given = tokens.flatMap((t) => (t.kind === 'option' ? [{ name: t.name, rawName: t.rawName }] : []));
    return { values: values as Values, positionals, given };
  } catch (err) {
    if ((err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      const words = argv.filter((a) => !a.startsWith('-'));
      throw new UsageError((err as Error).message, usageFor(words));
    }
    throw err;
  }
}

export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  let command: Command | undefined;
  let client: Client | undefined;
  let wantJson = false;
  try {
    const parsed = parse(argv);
    const { values } = parsed;
    wantJson = values.json === true;
    let words = parsed.positionals;
    let help = values.help === true;
    if (words[0] === 'help') {
      help = true;
      words = words.slice(1);
    }
    command = findCommand(words);
    if (!command) {
      const [first, second] = words;
      if (first === undefined) {
        if (help) {
          io.out(generalHelp());
          return EXIT.ok;
        }
        io.err(generalHelp());
        return EXIT.usage;
      }
      if (first in GROUPS) {
        if (second === undefined && help) {
          io.out(groupHelp(first));
          return EXIT.ok;
        }
        throw new UsageError(
          second === undefined ? `"${first}" needs a command.` : `unknown command "${first} ${second}".`,
          `${usageFor([first])}   (metamodel ${first} --help lists them)`,
        );
      }
      throw new UsageError(`unknown command "${first}".`, usageFor([]));
    }
    if (help) {
      io.out(commandHelp(command));
      return EXIT.ok;
    }

    const allowed = new Set([
      ...Object.keys(command.options),
      ...Object.keys(GLOBAL_OPTIONS).filter((name) => command!.service || !SERVICE_OPTIONS.has(name)),
    ]);
    for (const option of parsed.given) {
      if (!allowed.has(option.name)) {
        throw new UsageError(`${option.rawName} does not apply to "${commandName(command)}".`);
      }
    }
    const args = words.slice(command.path.length);
    if (args.length < command.args.length) {
      throw new UsageError(`missing ${command.args.slice(args.length).join(' ')}.`);
    }
    if (args.length > command.args.length) {
      throw new UsageError(
        `unexpected argument "${args[command.args.length]}" (quote a name that has spaces).`,
      );
    }

    let resolver: TypeResolver | undefined;
    const ctx: Ctx = {
      io,
      json: wantJson,
      client() {
        client ??= new Client(
          (values.url as string | undefined) ?? (io.env.METAMODEL_URL?.trim() || DEFAULT_URL),
          (values.token as string | undefined) ?? io.env.METAMODEL_TOKEN,
        );
        return client;
      },
      types() {
        resolver ??= new TypeResolver(ctx.client());
        return resolver;
      },
    };
    // Check --url before anything else runs, so a bad address is a usage error whatever the command does first.
    if (command.service) ctx.client();
    const status = await command.run(ctx, args, values);
    return typeof status === 'number' ? status : EXIT.ok;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`error: ${err.message}\n${err.usage ?? (command ? usageLine(command) : usageFor([]))}\n`);
      return EXIT.usage;
    }
    if (err instanceof Refusal) {
      io.err(`error: ${err.reason}: ${err.envelope.MESSAGE}\n`);
      if (err.where) {
        const { service, tenant, file } = err.where;
        io.err(`(${file ? `${file}, ` : ''}${tenant ? `tenant "${tenant}" at ` : ''}${service})\n`);
      }
      if (err.reason === 'unauthenticated' && client?.hasToken === false) {
        io.err(
          'hint: give a token with METAMODEL_TOKEN or --token (development: metamodel token --tenant T).\n',
        );
      }
      if (wantJson) io.out(json({ ...err.where, ...err.envelope.DATA }));
      return EXIT.refused;
    }
    if (err instanceof TransportError) {
      io.err(`error: ${err.message}\n`);
      return EXIT.unreachable;
    }
    io.err(`error: ${(err as Error)?.message ?? String(err)}\n`);
    return EXIT.refused;
  }
}

/** Runs the CLI on this process's arguments and sets its exit code. */
export async function runCli(): Promise<void> {
  process.exitCode = await main(process.argv.slice(2));
}
