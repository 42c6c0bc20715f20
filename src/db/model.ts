// Cypher for the metamodel as one document: what an export reads, and what a plan compares a document with.

import neo4j from 'neo4j-driver';
import { MAX_NAME_BYTES, MODEL_ROW_BYTES } from '../model/plans.js';
import {
  ATTR_PROJECTION,
  type StoredAttribute,
  TEXT_LENGTHS,
  toStoredAttribute,
  utf8BytesAtMost,
} from './attributes.js';
import {
  createdGuid,
  namedTypeBranches,
  type StoredType,
  toStoredType,
  typeProjection,
} from './entity-types.js';
import type { Run } from './run.js';

/**
 * Each type of the tenant in name order, and (in a subquery left open) its live definitions declared by callers, and
 * those being redeclared (carrying their values), which an export shows as they will be.
 */
const EACH_TYPE_WITH_LIVE_DEFINITIONS = `MATCH (t:EntityType) WHERE t.tenant = $tenant AND t.name_key >= ''
     CALL {
       WITH t
       OPTIONAL MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: t.guid}) USING INDEX a:AttributeDefinition(tenant, owner_guid)
       WHERE (a.state = 'live' OR a.carrying = true) AND a.origin = 'user_defined'`;

/**
 * Cypher: the bytes a definition (`a`, of the type `t`) takes at most in a model document's rows beside its texts:
 * its row, its name, its type's name (a plan's step repeats it) and the referenced type's name at its longest.
 */
const DEFINITION_ROW_BYTES = `${MODEL_ROW_BYTES} + ${utf8BytesAtMost('a.name')} + ${utf8BytesAtMost('t.name')}
       + CASE WHEN a.allowed_ref_type IS NULL THEN 0 ELSE ${MAX_NAME_BYTES} END`;

/**
 * What the tenant's model would hold in an export, counted without reading it: the types an export lists (the
 * user-defined ones, and any other carrying a live definition declared by a caller), at most `maxTypes + 1` of
 * them, and the definitions' number and JSON text.
 */
export async function measureModel(run: Run, tenant: string, maxTypes: number) {
  const rows = await run(
    `${EACH_TYPE_WITH_LIVE_DEFINITIONS}
       RETURN count(a) AS definitions,
              sum(CASE WHEN a.state = 'live' THEN ${TEXT_LENGTHS.json} ELSE coalesce(a.carry_json_bytes, 0) END) AS bytes,
              sum(${DEFINITION_ROW_BYTES}) AS rows
     }
     WITH t, definitions, bytes, rows WHERE t.origin = 'user_defined' OR definitions > 0
     WITH t, definitions, bytes, rows LIMIT $limit
     RETURN count(t) AS types, sum(definitions) AS definitions, sum(bytes) AS bytes,
            sum(rows + ${MODEL_ROW_BYTES} + ${utf8BytesAtMost('t.name')}) AS rows`,
    { tenant, limit: neo4j.int(maxTypes + 1) },
  );
  const row = rows[0];
  return {
    types: Number(row?.types ?? 0),
    definitions: Number(row?.definitions ?? 0),
    bytes: Number(row?.bytes ?? 0),
    /** The rows' bytes at most, beside the texts (DEFINITION_ROW_BYTES, and each type's row and name). */
    rows: Number(row?.rows ?? 0),
  };
}

export interface ModelEntry {
  type: StoredType;
  /** The type's live definitions declared by callers (platform attributes excluded), in name order. */
  live: StoredAttribute[];
}

/** The types an export lists, in normalised-name order, with their live definitions (whole rows). */
export async function readModel(run: Run, tenant: string, maxTypes: number): Promise<ModelEntry[]> {
  const rows = await run(
    `${EACH_TYPE_WITH_LIVE_DEFINITIONS}
       WITH a ORDER BY a.name_key
       RETURN [x IN collect(${ATTR_PROJECTION}) WHERE x[0] IS NOT NULL] AS live
     }
     WITH t, live WHERE t.origin = 'user_defined' OR size(live) > 0
     WITH t, live ORDER BY t.tenant, t.name_key LIMIT $limit
     RETURN ${typeProjection('t')} AS type, live`,
    { tenant, limit: neo4j.int(maxTypes) },
  );
  return rows.map((r) => ({
    type: toStoredType(r.type),
    live: (r.live as unknown[]).map(toStoredAttribute),
  }));
}

/** A name's type (resolveModelTypes), what reading its definitions costs, and its redeclarations carrying values. */
export interface ResolvedModelType {
  type: StoredType;
  definitions: number;
  bytes: number;
  /** The bytes its definitions take at most in a plan's steps, beside their texts (DEFINITION_ROW_BYTES). */
  rows: number;
  /**
   * Redeclarations carrying their values to the definitions stated anew (resolvers/carry.ts): each holds its room
   * under the 200 limit and the budgets (the new definition's enumerations and default) until it is declared.
   */
  carrying: { count: number; json: number; defaults: number };
}

/**
 * The types the given names resolve to, as a create-or-get would resolve each (the type holding the name, else the
 * one whose guid was derived from it), each with the number of definitions declared on it by callers (live and
 * withdrawn) and their enumerations' and defaults' JSON text, counted without reading the texts: what reading
 * those definitions would cost, known before they are read.
 */
export async function resolveModelTypes(
  run: Run,
  tenant: string,
  names: readonly { key: string; derivedGuid: string }[],
) {
  const rows = await run(
    `UNWIND range(0, size($names) - 1) AS i
     CALL {
       WITH i
       WITH $names[i] AS n
       CALL {
         ${namedTypeBranches('n.key', 'n.derivedGuid', 'n')}
       }
       WITH t ORDER BY rank LIMIT 1
       CALL {
         WITH t
         OPTIONAL MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: t.guid}) USING INDEX a:AttributeDefinition(tenant, owner_guid)
         WHERE a.origin = 'user_defined'
         WITH a, t, a.carrying = true AS carrying
         RETURN count(a) AS definitions, coalesce(sum(${TEXT_LENGTHS.json}), 0) AS bytes,
                coalesce(sum(${DEFINITION_ROW_BYTES}), 0) AS rows,
                sum(CASE WHEN carrying THEN 1 ELSE 0 END) AS carrying,
                sum(CASE WHEN carrying THEN coalesce(a.carry_json_bytes, 0) ELSE 0 END) AS carryJson,
                sum(CASE WHEN carrying THEN coalesce(a.carry_default_bytes, 0) ELSE 0 END) AS carryDefaults
       }
       RETURN ${typeProjection('t')} AS type, definitions, bytes, rows, carrying, carryJson, carryDefaults
     }
     RETURN i, type, definitions, bytes, rows, carrying, carryJson, carryDefaults`,
    { tenant, names },
  );
  const out: (ResolvedModelType | null)[] = names.map(() => null);
  for (const r of rows) {
    out[Number(r.i)] = {
      type: toStoredType(r.type),
      definitions: Number(r.definitions),
      bytes: Number(r.bytes),
      rows: Number(r.rows),
      carrying: {
        count: Number(r.carrying ?? 0),
        json: Number(r.carryJson ?? 0),
        defaults: Number(r.carryDefaults ?? 0),
      },
    };
  }
  return out;
}

/**
 * What a plan's declarations are checked against beyond the types it names, in one statement: the type of each
 * entity the reference defaults name (absent: no such entity), and for each name the document creates a type under,
 * the definitions still being purged on the guid it would take (createdGuid: a type deleted under the name gets its
 * guid back, with the definitions its deletion withdrew).
 */
export async function readPlanFacts(
  run: Run,
  tenant: string,
  referents: readonly string[],
  creates: readonly { key: string; derivedGuid: string }[],
): Promise<{ referentTypes: Map<string, string>; purging: Map<string, Set<string>> }> {
  const referentTypes = new Map<string, string>();
  const purging = new Map<string, Set<string>>();
  if (referents.length === 0 && creates.length === 0) return { referentTypes, purging };
  const rows = await run(
    `CALL {
       UNWIND $referents AS g
       MATCH (e:Entity {guid: g}) WHERE e.tenant = $tenant
       RETURN collect([g, e.type_guid]) AS referents
     }
     CALL {
       UNWIND $creates AS n
       ${createdGuid('n.key', 'n.derivedGuid', 'n')}
       MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: guid}) USING INDEX a:AttributeDefinition(tenant, owner_guid)
       WHERE a.origin = 'user_defined' AND a.state = 'withdrawn'
       RETURN collect([n.key, a.name_key]) AS purging
     }
     RETURN referents, purging`,
    { tenant, referents: [...referents], creates: [...creates] },
  );
  const row = rows[0];
  for (const [g, type] of (row?.referents ?? []) as [string, string][]) referentTypes.set(g, type);
  for (const [key, name] of (row?.purging ?? []) as [string, string][]) {
    const names = purging.get(key) ?? new Set<string>();
    names.add(name);
    purging.set(key, names);
  }
  return { referentTypes, purging };
}

/** Every definition declared by callers (live and withdrawn) on each of the types, whole rows, in name order. */
export async function readModelDefinitions(
  run: Run,
  tenant: string,
  typeGuids: readonly string[],
): Promise<Map<string, StoredAttribute[]>> {
  const rows = await run(
    `UNWIND $guids AS guid
     CALL {
       WITH guid
       OPTIONAL MATCH (a:AttributeDefinition {tenant: $tenant, owner_guid: guid}) USING INDEX a:AttributeDefinition(tenant, owner_guid)
       WHERE a.origin = 'user_defined'
       WITH a ORDER BY a.name_key
       RETURN [x IN collect(${ATTR_PROJECTION}) WHERE x[0] IS NOT NULL] AS definitions
     }
     RETURN guid, definitions`,
    { tenant, guids: [...typeGuids] },
  );
  return new Map(rows.map((r) => [r.guid as string, (r.definitions as unknown[]).map(toStoredAttribute)]));
}

/**
 * The types an export would list (user-defined, or carrying a live definition declared by a caller) other than
 * `listed` (guids), in name order, each with the name keys of its live definitions: at most `maxTypes + 1` types,
 * names only. What a plan reports as drift, and compares to guess a rename written by hand.
 */
export async function readUnlistedTypes(
  run: Run,
  tenant: string,
  listed: readonly string[],
  maxTypes: number,
) {
  const rows = await run(
    `${EACH_TYPE_WITH_LIVE_DEFINITIONS}
       WITH a ORDER BY a.name_key
       RETURN collect(a.name_key) AS keys
     }
     WITH t, keys WHERE (t.origin = 'user_defined' OR size(keys) > 0) AND NOT t.guid IN $listed
     WITH t, keys LIMIT $limit
     RETURN t.guid AS guid, t.name AS name, t.origin AS origin, keys`,
    { tenant, listed, limit: neo4j.int(maxTypes + 1) },
  );
  return rows.map((r) => ({
    guid: r.guid as string,
    name: r.name as string,
    origin: r.origin as string,
    keys: r.keys as string[],
  }));
}
