// A type's former names on the wire: the row each former name is, and what releasing one does, said once for the REST
// route and the GraphQL mutation.
import { z } from 'zod';
import { named } from './named.js';

export const FormerNameRow = named(
  'FormerName',
  'A name the type had before a rename.',
  z.object({
    name: z.string().describe('The name, as it was spelt.'),
    left_at: z.iso.datetime().describe('When a rename left it (ISO 8601 date-time, UTC).'),
    released_at: z.iso
      .datetime()
      .optional()
      .describe(
        'When the name was released (ISO 8601 date-time, UTC): it no longer resolves to this type, and creating it makes a new type. Left out while the name was never released.',
      ),
  }),
);

export type FormerNameRow = z.output<typeof FormerNameRow>;

/** What releasing a former name does, said once for the REST route and the GraphQL mutation. */
export const RELEASE_FORMER_NAME = {
  description:
    "The name a type was created under keeps resolving to it after a rename (create-or-get by that name answers the type). Releasing it ends that: creating the name then makes a new type, with a new guid (the old one stays this type's). Allowed to whoever may rename the type; recorded in its history (type_name_released).",
  released:
    'True when the name resolved to this type until now; false when it already resolved to no type (nothing was written).',
  name: 'The former name to release: the name the type was created under (a name that resolves to another type, or its current name, is refused with name_not_held).',
};
