// GraphQL fields read from a wire row's zod schema (src/contract/wire.ts), its one declaration: each field's name
// (snake_case there, camelCase here), its type, whether it may be absent, and its description.
import type { GenericFieldRef } from '@pothos/core';
import { z } from 'zod';
import type { builder } from './builder.js';

type Shape = Record<string, z.ZodType>;
type FieldBuilder<Parent> = PothosSchemaTypes.ObjectFieldBuilder<
  typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never,
  Parent
>;
type FieldRef = GenericFieldRef<unknown>;

/** `name_locked_hint` → `nameLockedHint`. */
export const graphqlName = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

const inner = (field: z.ZodType): z.ZodType =>
  field instanceof z.ZodOptional || field instanceof z.ZodNullable
    ? inner(field.unwrap() as z.ZodType)
    : field;

/** What a row says a field is: its own description, or (an optional field) the one of what it wraps. */
export function rowDescription(field: z.ZodType): string {
  const text = field.description ?? inner(field).description;
  if (!text) throw new Error('A row field without a description: describe it where the row is declared.');
  return text;
}

/** Whether a row may leave the field out or null (GraphQL: nullable). */
export const isOptional = (field: z.ZodType) =>
  field.safeParse(undefined).success || field.safeParse(null).success;

/**
 * The GraphQL scalar a row field maps to: strings (date-times too, as ISO 8601 text) to String, whole numbers to Int,
 * booleans and boolean literals to Boolean.
 */
function scalarOf(key: string, field: z.ZodType): 'String' | 'Int' | 'Boolean' {
  const type = inner(field);
  if (type instanceof z.ZodString || type instanceof z.ZodStringFormat) return 'String';
  if (type instanceof z.ZodNumber && type.format === 'safeint') return 'Int';
  if (type instanceof z.ZodBoolean) return 'Boolean';
  if (type instanceof z.ZodLiteral && [...type.values].every((v) => typeof v === 'boolean')) return 'Boolean';
  throw new Error(
    `Row field ${key}: give it a GraphQL field of its own (not a string, a whole number or a boolean).`,
  );
}

/**
 * Every field of `shape`, in its order, as a GraphQL field of an object whose parent holds the row's keys (null when
 * absent): `own` gives the fields the object declares itself (an ID, an enum, a related object), by row key; the
 * rest are String or Boolean, nullable when the row may leave them out, described as the row describes them.
 */
export function rowFields<Parent extends object>(
  t: FieldBuilder<Parent>,
  shape: Shape,
  own: Partial<Record<string, FieldRef>> = {},
): Record<string, FieldRef> {
  const fields: Record<string, FieldRef> = {};
  for (const [key, field] of Object.entries(shape)) {
    const given = own[key];
    if (given) {
      fields[graphqlName(key)] = given;
      continue;
    }
    fields[graphqlName(key)] = t.field({
      type: scalarOf(key, field),
      nullable: isOptional(field),
      description: rowDescription(field),
      resolve: (parent) => (parent as Record<string, unknown>)[key] as never,
    }) as FieldRef;
  }
  return fields;
}
