// Attribute definitions from the command line: list, declare, withdraw (a change in place: attribute-change.ts).

import type { AttributeRow as WireAttributeRow } from '../../src/contract/wire.js';
import { UsageError } from './client.js';
import {
  type Command,
  type Ctx,
  jsonOption,
  type OptionSpec,
  quoted,
  stringOption,
  type Values,
} from './command.js';
import { cell, json, listCell, record, table } from './output.js';
import type { TypeRow } from './type-resolver.js';

/** The texts for people a declaration and a change take. */
export const TEXT_OPTIONS = {
  description: {
    type: 'string',
    value: 'TEXT',
    help: 'what the attribute is for (at most 1,000 characters)',
  },
  'display-name': { type: 'string', value: 'TEXT', help: 'a label for people (at most 256 characters)' },
} satisfies Record<string, OptionSpec>;

/** A definition as the REST API lists it (its schema in the REST contract), with `state` when withdrawn. */
export type AttributeRow = WireAttributeRow & { state?: string };

/** Names of the referenced types, for display (a guid that no longer resolves is shown as it is). */
export async function refTypeNames(ctx: Ctx, attributes: AttributeRow[]): Promise<Map<string, string>> {
  const guids = [...new Set(attributes.map((a) => a.allowed_ref_type).filter((g): g is string => !!g))];
  const names = new Map<string, string>();
  await Promise.all(
    guids.map(async (guid) => {
      try {
        const { entity_type } = await ctx
          .client()
          .request<{ entity_type: TypeRow }>('GET', `/entities/types/${encodeURIComponent(guid)}`);
        names.set(guid, entity_type.name);
      } catch {
        // shown as the guid
      }
    }),
  );
  return names;
}

const constraint = (a: AttributeRow, refNames: Map<string, string>) =>
  a.allowed_ref_type
    ? `→ ${refNames.get(a.allowed_ref_type) ?? a.allowed_ref_type}`
    : a.allowed_values
      ? `one of: ${listCell(a.allowed_values)}`
      : '';

function flags(a: AttributeRow): string {
  const out: string[] = [];
  if (a.required) out.push('required');
  if (a.filterable) out.push('filterable');
  return out.join(', ');
}

export function attributeRecord(a: AttributeRow, refNames: Map<string, string>): [string, string][] {
  return [
    ['name', a.name],
    ['guid', a.guid],
    ['value type', a.value_type],
    ['cardinality', a.cardinality],
    ['allowed values', a.allowed_values ? listCell(a.allowed_values, 20) : ''],
    [
      'allowed ref type',
      a.allowed_ref_type
        ? `${refNames.get(a.allowed_ref_type) ?? ''} (${a.allowed_ref_type})`.replace(/^ /, '')
        : '',
    ],
    ['required', String(a.required)],
    ['filterable', String(a.filterable)],
    ['default value', cell(a.default_value)],
    ['origin', a.origin],
    ...(a.display_name ? ([['display name', a.display_name]] as [string, string][]) : []),
    ...(a.description ? ([['description', a.description]] as [string, string][]) : []),
    ...(a.state ? ([['state', a.state]] as [string, string][]) : []),
  ];
}

export const attributesList: Command = {
  path: ['attributes', 'list'],
  args: ['TYPE'],
  options: {},
  service: true,
  synopsis: 'TYPE',
  summary: 'List the attributes applying to a type (the five platform ones, then its own)',
  description:
    'Lists every live attribute applying to TYPE: the five platform attributes (domain, env, tags,\n' +
    'classification, groups), then those declared on the type, in name order. Withdrawn ones are not listed.',
  examples: ['metamodel attributes list Report', 'metamodel attributes list table --json'],
  async run(ctx, [typeRef]) {
    const type = await ctx.types().resolve(typeRef!);
    const { attributes } = await ctx
      .client()
      .request<{ attributes: AttributeRow[] }>(
        'GET',
        `/entities/types/${encodeURIComponent(type.guid)}/attributes`,
      );
    if (ctx.json) return ctx.io.out(json({ attributes }));
    const refNames = await refTypeNames(ctx, attributes);
    ctx.io.out(`Attributes of type ${quoted(type.name)} (${type.guid}): ${attributes.length}\n`);
    ctx.io.out(
      table(
        ['name', 'value type', 'cardinality', 'constraint', 'flags', 'default', 'origin'],
        attributes.map((a) => [
          a.name,
          a.value_type,
          a.cardinality,
          constraint(a, refNames),
          flags(a),
          cell(a.default_value),
          a.origin,
        ]),
      ),
    );
  },
};

export const attributesDeclare: Command = {
  path: ['attributes', 'declare'],
  args: ['TYPE', 'NAME'],
  options: {
    'value-type': {
      type: 'string',
      value: 'T',
      help: 'string, number, boolean, date, json or entity_ref (required)',
    },
    cardinality: { type: 'string', value: 'C', help: 'single or multi (required)' },
    'allowed-values': {
      type: 'string',
      value: 'JSON',
      help: `the enumeration, a JSON array, e.g. '["gold","silver"]' (scalar types only)`,
    },
    'ref-type': {
      type: 'string',
      value: 'TYPE',
      help: 'the type an entity_ref points at: a type guid or name (required for entity_ref)',
    },
    required: { type: 'boolean', help: 'instances must carry a value' },
    filterable: { type: 'boolean', help: 'the attribute can be filtered on (entity_ref only)' },
    default: {
      type: 'string',
      value: 'JSON',
      help: `default value as JSON: '"silver"', 42, '["a","b"]'; an entity guid (quoted) for references`,
    },
    description: TEXT_OPTIONS.description,
    'display-name': TEXT_OPTIONS['display-name'],
    'dry-run': { type: 'boolean', help: 'only check: the service validates and writes nothing' },
  },
  service: true,
  synopsis:
    'TYPE NAME --value-type T --cardinality single|multi [--allowed-values JSON] [--ref-type TYPE] ' +
    '[--required] [--filterable] [--default JSON] [--description TEXT] [--display-name TEXT] [--dry-run]',
  summary: 'Declare an attribute definition on a type',
  description:
    'Declares the attribute NAME on TYPE. Afterwards `attributes change` changes it in place where every stored\n' +
    'value survives (values added, required dropped, filterable, default, description, display name); any other\n' +
    "change is a redeclaration (through a model file). Every rule is the service's: a refused declaration prints\n" +
    'its reason and exits 1.\n' +
    '--required and --filterable are sent only when given (the service refuses filterable on non-references).',
  examples: [
    `metamodel attributes declare Report tier --value-type string --cardinality single --allowed-values '["gold","silver"]' --default '"silver"'`,
    'metamodel attributes declare Report owner --value-type entity_ref --cardinality single --ref-type person --filterable',
    'metamodel attributes declare Report score --value-type number --cardinality single --required --default 0 --dry-run',
  ],
  async run(ctx, [typeRef, name], values) {
    const body = declarationBody(name!, values);
    const type = await ctx.types().resolve(typeRef!);
    const refType = stringOption(values, 'ref-type');
    if (refType !== undefined)
      body.allowed_ref_type = (await ctx.types().resolve(refType, '--ref-type')).guid;
    const dryRun = values['dry-run'] === true;
    const data = await ctx.client().request<{
      attribute: AttributeRow;
      usage: { declared: number; limit: number };
      dry_run?: boolean;
    }>('POST', `/entities/types/${encodeURIComponent(type.guid)}/attributes`, {
      body,
      ...(dryRun ? { query: { dry_run: 'true' } } : {}),
    });
    if (ctx.json) return ctx.io.out(json(data));
    const { declared, limit } = data.usage;
    ctx.io.out(
      dryRun
        ? `Dry run: ${quoted(data.attribute.name)} can be declared on type ${quoted(type.name)}; nothing was written (${declared} of ${limit} declared on the type).\n`
        : `Declared ${quoted(data.attribute.name)} on type ${quoted(type.name)} (${declared} of ${limit} declared on the type).\n`,
    );
    ctx.io.out(record(attributeRecord(data.attribute, await refTypeNames(ctx, [data.attribute]))));
  },
};

/** The declaration body from the options (allowed_ref_type is added once resolved). */
function declarationBody(name: string, values: Values): Record<string, unknown> {
  const valueType = stringOption(values, 'value-type');
  const cardinality = stringOption(values, 'cardinality');
  if (valueType === undefined) throw new UsageError('--value-type is required.');
  if (cardinality === undefined) throw new UsageError('--cardinality is required (single or multi).');
  const body: Record<string, unknown> = { name, value_type: valueType, cardinality };
  const allowed = jsonOption(values, 'allowed-values', `an array, e.g. '["gold","silver"]'`);
  if (allowed !== undefined) {
    if (!Array.isArray(allowed)) throw new UsageError('--allowed-values must be a JSON array.');
    body.allowed_values = allowed;
  }
  if (values.required === true) body.required = true;
  if (values.filterable === true) body.filterable = true;
  const defaultValue = jsonOption(values, 'default', `a string needs quotes: --default '"silver"'`);
  if (defaultValue !== undefined) body.default_value = defaultValue;
  const description = stringOption(values, 'description');
  if (description !== undefined) body.description = description;
  const displayName = stringOption(values, 'display-name');
  if (displayName !== undefined) body.display_name = displayName;
  return body;
}

export const withdraw: Command = {
  path: ['withdraw'],
  args: ['TYPE', 'NAME'],
  options: {
    'dry-run': {
      type: 'boolean',
      help: 'only report what would be affected (instances and stored values); writes nothing',
    },
  },
  service: true,
  synopsis: 'TYPE NAME [--dry-run]',
  summary: 'Withdraw an attribute definition from a type (its stored values are then purged)',
  description:
    'Withdraws the live attribute NAME of TYPE: it leaves the listing at once, and its stored values are removed\n' +
    'in the background; the daily purge (or `metamodel purge`) then removes the definition and frees the name.',
  examples: ['metamodel withdraw Report tier --dry-run', 'metamodel withdraw Report tier'],
  async run(ctx, [typeRef, name], values) {
    if (name === '.' || name === '..') {
      // A URL path cannot carry these as a segment: fetch would resolve them as "this" and "parent" directory.
      throw new UsageError(
        `the name ${quoted(name)} cannot be sent in a URL path; use GraphQL withdrawAttribute.`,
      );
    }
    const dryRun = values['dry-run'] === true;
    const type = await ctx.types().resolve(typeRef!);
    const data = await ctx.client().request<{
      attribute: AttributeRow;
      withdrawn?: boolean;
      dry_run?: boolean;
      impact?: { instances: number; values: number };
    }>('DELETE', `/entities/attributes/${encodeURIComponent(type.guid)}/${encodeURIComponent(name!)}`, {
      ...(dryRun ? { query: { dry_run: 'true' } } : {}),
    });
    if (ctx.json) return ctx.io.out(json(data));
    const attr = quoted(data.attribute.name);
    if (dryRun) {
      const impact = data.impact ?? { instances: 0, values: 0 };
      ctx.io.out(
        `Dry run: withdrawing ${attr} from type ${quoted(type.name)} would remove ${impact.values} stored values on ${impact.instances} instances; nothing was written.\n`,
      );
    } else {
      ctx.io.out(
        `Withdrew ${attr} from type ${quoted(type.name)}. Its stored values are being removed; the daily purge (or \`metamodel purge\`) then frees the name.\n`,
      );
    }
  },
};
