// The types that exist in every tenant (docs/api.md#entity-types), and the managed types the platform sets up
// itself.
import { nameKey } from './names.js';

export interface TypeProps {
  name: string;
  origin: 'system';
  catalog_level?: boolean;
  vocabulary?: boolean;
  label?: string;
  icon?: string;
  creatable?: boolean;
  name_locked_hint?: string;
}

/** The root class: owner of the platform attributes; nothing may be declared on it. */
export const ROOT_TYPE_NAME = 'entity';
/** Its name key, the one the database finds it by. */
export const ROOT_KEY = nameKey(ROOT_TYPE_NAME);

/** Catalog levels from the top; each level's parent_type is the level above it. */
export const CATALOG_LEVELS: readonly TypeProps[] = [
  { name: 'datasource', origin: 'system', catalog_level: true, label: 'Data source', icon: 'datasource' },
  { name: 'database', origin: 'system', catalog_level: true, label: 'Database', icon: 'database' },
  { name: 'schema', origin: 'system', catalog_level: true, label: 'Schema', icon: 'schema' },
  { name: 'table', origin: 'system', catalog_level: true, label: 'Table', icon: 'table' },
  { name: 'column', origin: 'system', catalog_level: true, label: 'Column', icon: 'column' },
];

export const VOCABULARY_TYPES: readonly TypeProps[] = ['domain', 'env', 'tag', 'classification', 'group'].map(
  (name) => ({ name, origin: 'system' as const, vocabulary: true }),
);

/** Every system type created when a tenant is first seen. Managed types are not among them. */
export const SYSTEM_TYPES: readonly TypeProps[] = [
  { name: ROOT_TYPE_NAME, origin: 'system' },
  ...CATALOG_LEVELS,
  ...VOCABULARY_TYPES,
];

export const PARENT_LINKS: readonly { child: string; parent: string }[] = CATALOG_LEVELS.slice(1).map(
  (level, i) => ({
    child: level.name,
    parent: CATALOG_LEVELS[i]!.name,
  }),
);

/**
 * Bumped whenever what a tenant is set up with changes (SYSTEM_TYPES, PARENT_LINKS, the platform attributes, the
 * model version's shards: 3), so every tenant is brought in step once.
 */
export const SYSTEM_TYPES_VERSION = 3;

export const DASHBOARD_TYPE: TypeProps = {
  name: 'dashboard',
  origin: 'system',
  catalog_level: true,
  label: 'Dashboard',
  icon: 'dashboard',
  creatable: false,
  name_locked_hint: 'Dashboard names come from the BI tool and cannot be edited in the catalog.',
};

/** Managed types by normalised name: kept by their feature, never created by hand. */
export const MANAGED_TYPES: ReadonlyMap<string, TypeProps> = new Map([[DASHBOARD_TYPE.name, DASHBOARD_TYPE]]);

/**
 * The five platform attributes: owned by the root type, applying to every type, all optional filterable references
 * to vocabularies. Every stored field of theirs is stated here (db/entity-types.ts writes them as they are).
 */
const platformAttribute = (name: string, cardinality: 'single' | 'multi', refType: string) =>
  ({ name, cardinality, refType, value_type: 'entity_ref', required: false, filterable: true }) as const;
export const PLATFORM_ATTRIBUTES = [
  platformAttribute('domain', 'single', 'domain'),
  platformAttribute('env', 'single', 'env'),
  platformAttribute('tags', 'multi', 'tag'),
  platformAttribute('classification', 'single', 'classification'),
  platformAttribute('groups', 'multi', 'group'),
] as const;

export const PLATFORM_ATTRIBUTE_NAMES: ReadonlySet<string> = new Set(PLATFORM_ATTRIBUTES.map((a) => a.name));
