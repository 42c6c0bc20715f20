// The shape of a CLI command, and small helpers the commands share.
import { type Client, UsageError } from './client.js';
import type { Io } from './output.js';
import type { TypeResolver } from './type-resolver.js';

export interface OptionSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  short?: string;
  /** Placeholder of the value in help, e.g. N or JSON. */
  value?: string;
  help: string;
}

export type Values = Record<string, string | boolean | string[] | undefined>;

export interface Ctx {
  io: Io;
  json: boolean;
  /** The REST client for --url and --token (made on first use, so `token` needs neither). */
  client(): Client;
  types(): TypeResolver;
}

export interface Command {
  /** Words naming the command, e.g. ['attributes', 'declare']. */
  path: string[];
  /** Positional arguments, in order; all required. */
  args: string[];
  /** Options beyond the global ones. */
  options: Record<string, OptionSpec>;
  /** Whether it talks to the service (then --url and --token apply). */
  service: boolean;
  /** Usage synopsis after the command words. */
  synopsis: string;
  summary: string;
  description: string;
  examples: string[];
  /** Resolves to the exit status when it is not 0 (plan: 2 when there are changes). */
  // biome-ignore lint/suspicious/noConfusingVoidType: most commands end with nothing to say (exit 0)
  run(ctx: Ctx, args: string[], values: Values): Promise<void | number>;
}

export const stringOption = (values: Values, name: string): string | undefined => {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * The texts for people given as --description and --display-name, as the fields of a body: an option left out is
 * left out, an empty one null (removes the text).
 */
export function textFields(values: Values): Record<string, string | null> {
  const fields: Record<string, string | null> = {};
  for (const [option, field] of [
    ['description', 'description'],
    ['display-name', 'display_name'],
  ] as const) {
    const text = stringOption(values, option);
    if (text !== undefined) fields[field] = text === '' ? null : text;
  }
  return fields;
}

/** Parses a JSON option value; unreadable JSON is a usage error. */
export function jsonOption(values: Values, name: string, hint: string): unknown {
  const raw = stringOption(values, name);
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    throw new UsageError(`--${name} must be JSON (${hint}), not ${raw}.`);
  }
}

/** A name for messages: quoted, as the service spelt it. */
export const quoted = (name: string) => JSON.stringify(name);
