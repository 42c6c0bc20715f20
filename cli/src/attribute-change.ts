// `metamodel attributes change`: a live definition changed in place (PATCH /entities/types/{guid}/attributes/{name}),
// for the changes every stored value survives; the service decides which those are and refuses the others.

import type { FieldChange } from '../../src/contract/wire.js';
import { type AttributeRow, attributeRecord, refTypeNames, TEXT_OPTIONS } from './attributes.js';
import { UsageError } from './client.js';
import { type Command, type Ctx, jsonOption, quoted, textFields, type Values } from './command.js';
import { changesText } from './model.js';
import { json, record } from './output.js';

/** The change a `attributes change` sends: the fields its options name (null resets one). */
async function changeBody(ctx: Ctx, typeGuid: string, name: string, values: Values) {
  const body: Record<string, unknown> = {};
  const allowed = jsonOption(values, 'allowed-values', `an array, or null for none`);
  if (allowed !== undefined) {
    if (allowed !== null && !Array.isArray(allowed))
      throw new UsageError('--allowed-values must be a JSON array or null.');
    body.allowed_values = allowed;
  }
  const added = jsonOption(values, 'add-values', `an array, e.g. '["C"]'`);
  if (added !== undefined) {
    if (!Array.isArray(added)) throw new UsageError('--add-values must be a JSON array.');
    if (allowed !== undefined) throw new UsageError('give --allowed-values or --add-values, not both.');
    const { attributes } = await ctx
      .client()
      .request<{ attributes: AttributeRow[] }>(
        'GET',
        `/entities/types/${encodeURIComponent(typeGuid)}/attributes`,
      );
    const current = attributes.find((a) => a.name.toLowerCase() === name.trim().toLowerCase());
    // (an unknown name is left to the service's refusal; an attribute without enumeration is sent the values)
    body.allowed_values = [...(current?.allowed_values ?? []), ...added];
  }
  if (values['not-required'] === true) body.required = false;
  if (values.filterable === true) body.filterable = true;
  if (values['not-filterable'] === true) body.filterable = false;
  const defaultValue = jsonOption(
    values,
    'default',
    `a string needs quotes: --default '"silver"'; null for none`,
  );
  if (defaultValue !== undefined) body.default_value = defaultValue;
  Object.assign(body, textFields(values));
  if (Object.keys(body).length === 0) throw new UsageError('say what to change (see --help).');
  return body;
}

export const attributesChange: Command = {
  path: ['attributes', 'change'],
  args: ['TYPE', 'NAME'],
  options: {
    'allowed-values': {
      type: 'string',
      value: 'JSON',
      help: 'the whole enumeration (a superset of the current one), or null for none',
    },
    'add-values': { type: 'string', value: 'JSON', help: `values to add to the enumeration, e.g. '["C"]'` },
    'not-required': { type: 'boolean', help: 'instances need no longer carry a value' },
    filterable: { type: 'boolean', help: 'the attribute can be filtered on (entity_ref only)' },
    'not-filterable': { type: 'boolean', help: 'the attribute can no longer be filtered on' },
    default: { type: 'string', value: 'JSON', help: 'another default value as JSON, or null for none' },
    ...TEXT_OPTIONS,
    'dry-run': { type: 'boolean', help: 'only check: the service validates and writes nothing' },
  },
  service: true,
  synopsis:
    'TYPE NAME [--add-values JSON | --allowed-values JSON] [--not-required] [--filterable | --not-filterable] ' +
    '[--default JSON] [--description TEXT] [--display-name TEXT] [--dry-run]',
  summary: 'Change an attribute definition in place (its guid and stored values kept)',
  description:
    'Changes the live attribute NAME of TYPE in place, for changes every stored value survives: values added to\n' +
    'its enumeration, required dropped, filterable on or off, another default, its description or display name.\n' +
    'It never leaves the listing. Any other change is refused (attribute_change_not_in_place, exit 1): redeclare\n' +
    'it through a model file (`metamodel apply --allow-withdraw`), which carries its values. An empty --description\n' +
    'or --display-name removes it.',
  examples: [
    `metamodel attributes change Report grade --add-values '["C"]'`,
    'metamodel attributes change Report grade --not-required --default null',
    'metamodel attributes change Report grade --display-name "Grade" --description "Letter grade, A best"',
  ],
  async run(ctx, [typeRef, name], values) {
    if (values.filterable === true && values['not-filterable'] === true)
      throw new UsageError('give --filterable or --not-filterable, not both.');
    const type = await ctx.types().resolve(typeRef!);
    const body = await changeBody(ctx, type.guid, name!, values);
    const dryRun = values['dry-run'] === true;
    const data = await ctx.client().request<{
      attribute: AttributeRow;
      changed: boolean;
      changes: FieldChange[];
      dry_run?: boolean;
    }>('PATCH', `/entities/types/${encodeURIComponent(type.guid)}/attributes/${encodeURIComponent(name!)}`, {
      body,
      ...(dryRun ? { query: { dry_run: 'true' } } : {}),
    });
    if (ctx.json) return ctx.io.out(json(data));
    const attr = quoted(data.attribute.name);
    const what = changesText(data.changes);
    ctx.io.out(
      !data.changed
        ? `${attr} on type ${quoted(type.name)} already is as asked; nothing was written.\n`
        : dryRun
          ? `Dry run: ${attr} on type ${quoted(type.name)} can change in place (${what}); nothing was written.\n`
          : `Changed ${attr} on type ${quoted(type.name)} in place: ${what}. Its guid and values are kept.\n`,
    );
    ctx.io.out(record(attributeRecord(data.attribute, await refTypeNames(ctx, [data.attribute]))));
  },
};
