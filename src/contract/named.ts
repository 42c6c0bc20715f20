// Named schemas of the REST contract: each becomes a component of the OpenAPI document, referenced by name, and its
// description is the one every other statement of the shape (GraphQL, the docs) reads.
import { z } from 'zod';

/** Named schemas: they become components/schemas of the OpenAPI document and are referenced by name. */
export const components = new Map<z.ZodType, { id: string; description: string }>();

export const named = <T extends z.ZodType>(id: string, description: string, schema: T): T => {
  components.set(schema, { id, description });
  return schema;
};

/** What a schema is, in words: its name's description, or its own. */
export const descriptionOf = (schema: z.ZodType): string =>
  components.get(schema)?.description ?? schema.description ?? '';

export const guid = (what: string) => z.string().describe(what);
