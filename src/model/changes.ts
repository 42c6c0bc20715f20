// What a change of the metamodel can be: the kinds of change record, each with what it means, stated once for the
// records (db/changes.ts), the REST rows (contract/wire.ts) and the GraphQL enum (schema/history.ts).

export const CHANGE_KINDS = [
  'type_created',
  'type_renamed',
  'type_name_released',
  'type_deleted',
  'type_described',
  'managed_type_set_up',
  'attribute_declared',
  'attribute_evolved',
  'attribute_withdrawn',
  'attribute_removed',
] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

export const CHANGE_KIND_DESCRIPTIONS: Record<ChangeKind, string> = {
  type_created: 'A user-defined type was created (or recreated under its name, with the same guid).',
  type_renamed: 'A user-defined type was renamed (before and after carry the names).',
  type_name_released:
    'A former name of a type was released: it no longer resolves to the type (before carries the name and the guid it resolved to, after the guid a type created under it will take).',
  type_deleted:
    'A user-defined type was deleted; before carries it, with the live definitions withdrawn with it (withdrawn_attributes).',
  type_described:
    "A type's description or display name was changed (before and after carry the name and the texts that changed).",
  managed_type_set_up:
    "A managed type (dashboard) was set up by its feature's first row, or brought in step with the feature's definition.",
  attribute_declared: 'An attribute definition was declared (after carries its specification).',
  attribute_evolved:
    'A live definition was changed in place (same guid, stored values untouched): before and after carry the fields that changed, with the name.',
  attribute_withdrawn: 'An attribute definition was withdrawn.',
  attribute_removed:
    'The daily purge removed a withdrawn definition once its data was gone (no actor, no request id).',
};
