// `metamodel`: the command-line client of the metamodel service's REST API (cli/bin/metamodel.mjs runs this).
// Exit status: 0 done; 1 the service refused; 2 usage error; 3 no usable answer (unreachable, not an envelope);
// 4 apply done as far as it can be, the tenant not matching the file yet (carries, purges). `plan`: 0, 2 changes,
// 1 any error (terraform plan -detailed-exitcode).

import { type ParseArgsConfig, parseArgs } from 'node:util';
import { Client, Refusal, TransportError, UsageError } from './client.js';
import type { Command, Ctx, Values } from './command.js';
import {
  COMMANDS,
  commandHelp,
  commandName,
  DEFAULT_URL,
  GLOBAL_OPTIONS,
  GROUPS,
  generalHelp,
  groupHelp,
  SERVICE_OPTIONS,
  usageLine,
} from './commands.js';
import { type Io, json, processIo } from './output.js';
import { TypeResolver } from './type-resolver.js';

export { COMMANDS, DEFAULT_URL, generalHelp };

export const EXIT = { ok: 0, refused: 1, usage: 2, unreachable: 3, waiting: 4 } as const;

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

/**
 * `plan` exits as terraform plan -detailed-exitcode: 0 no changes, 2 changes, 1 any error (a usage error and an
 * unreachable service included), so that a script never reads a mistake as "changes". (Before the command is
 * known, a usage error of `metamodel plan …` is recognised by its first word.)
 */
function failed(code: number, command: Command | undefined, argv: readonly string[]): number {
  const planning = command ? command.path[0] === 'plan' : argv.find((a) => !a.startsWith('-')) === 'plan';
  return planning ? EXIT.refused : code;
}

/** The command's positional arguments, once every option given is one it takes and the count is right. */
function argumentsOf(command: Command, parsed: Parsed, words: string[]): string[] {
  const allowed = new Set([
    ...Object.keys(command.options),
    ...Object.keys(GLOBAL_OPTIONS).filter((name) => command.service || !SERVICE_OPTIONS.has(name)),
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
  return args;
}

export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  const status = await runMain(argv, io);
  return status.failed ? failed(status.code, status.command, argv) : status.code;
}

async function runMain(
  argv: string[],
  io: Io,
): Promise<{ code: number; failed: boolean; command?: Command | undefined }> {
  let command: Command | undefined;
  const done = (code: number) => ({ code, failed: false, command });
  const fault = (code: number) => ({ code, failed: true, command });
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
          return done(EXIT.ok);
        }
        io.err(generalHelp());
        return fault(EXIT.usage);
      }
      if (first in GROUPS) {
        if (second === undefined && help) {
          io.out(groupHelp(first));
          return done(EXIT.ok);
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
      return done(EXIT.ok);
    }

    const args = argumentsOf(command, parsed, words);

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
    return done(typeof status === 'number' ? status : EXIT.ok);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`error: ${err.message}\n${err.usage ?? (command ? usageLine(command) : usageFor([]))}\n`);
      return fault(EXIT.usage);
    }
    if (err instanceof Refusal) {
      if (err.detail) io.err(err.detail);
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
      return fault(EXIT.refused);
    }
    if (err instanceof TransportError) {
      io.err(`error: ${err.message}\n`);
      return fault(EXIT.unreachable);
    }
    io.err(`error: ${(err as Error)?.message ?? String(err)}\n`);
    return fault(EXIT.refused);
  }
}

/** Runs the CLI on this process's arguments and sets its exit code. */
export async function runCli(): Promise<void> {
  process.exitCode = await main(process.argv.slice(2));
}
