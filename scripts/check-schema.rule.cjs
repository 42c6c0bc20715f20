// graphql-inspector diff rule (loaded by scripts/check-schema.mjs with --rule): a breaking change whose path the
// same change announced in SCHEMA_CHANGES.md is lowered to "dangerous", so it is reported but does not fail the
// check. The wrapper passes the newly announced paths as a JSON array in SCHEMA_CHECK_ANNOUNCED.
'use strict';

const SOURCE = 'SCHEMA_CHANGES.md';

/** @param {{ changes: Array<{ path?: string, message: string, criticality: { level: string, reason?: string } }> }} input */
module.exports = ({ changes }) => {
  const announced = new Set(JSON.parse(process.env.SCHEMA_CHECK_ANNOUNCED ?? '[]'));
  const matched = new Set();
  const lowered = changes.map((change) => {
    if (change.criticality.level !== 'BREAKING' || !change.path || !announced.has(change.path)) return change;
    matched.add(change.path);
    return {
      ...change,
      message: `${change.message} (breaking, announced in ${SOURCE})`,
      criticality: {
        ...change.criticality,
        level: 'DANGEROUS',
        reason: [`Announced in ${SOURCE}.`, change.criticality.reason].filter(Boolean).join(' '),
      },
    };
  });
  for (const path of announced) {
    if (!matched.has(path)) {
      console.warn(`note: ${SOURCE} announces \`${path}\`, but no breaking change has that path.`);
    }
  }
  return lowered;
};
