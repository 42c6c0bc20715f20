// Name normalisation and guid derivation: how a type name becomes the key it is compared and identified by.
import { v5 as uuidv5 } from 'uuid';
import { refuse } from '../errors.js';
import { CONTROL, codePointName, INVISIBLE } from './text.js';

/** Longest accepted name, in Unicode code points, after trimming. */
export const MAX_NAME_LENGTH = 256;

// Fixed namespace for the service's derived identifiers (UUIDv5).
const GUID_NAMESPACE = '3f0b5a7e-5c1d-4b8e-9a57-6c2f1e0d4a11';

/** The name as displayed: trimmed of surrounding whitespace, Unicode NFC. Refuses empty and over-long names. */
export function cleanName(raw: string): string {
  if (!raw.isWellFormed()) {
    throw refuse('invalid_field', 'The name is not well-formed Unicode (a lone surrogate).');
  }
  const name = raw.normalize('NFC').trim();
  if (name.length === 0) throw refuse('empty_value', 'The name is empty once spaces are trimmed.');
  // (A name of at most MAX_NAME_LENGTH UTF-16 units has at most as many code points: counted only when longer.)
  if (name.length > MAX_NAME_LENGTH && [...name].length > MAX_NAME_LENGTH) {
    throw refuse('name_too_long', `The name is longer than ${MAX_NAME_LENGTH} characters.`);
  }
  if (CONTROL.test(name)) throw refuse('invalid_field', 'The name contains control characters.');
  const hidden = INVISIBLE.exec(name);
  if (hidden) {
    throw refuse(
      'invalid_field',
      `The name contains an invisible or direction-changing character (${codePointName(hidden[0])} at character ${[...name.slice(0, hidden.index)].length + 1}); a name may not hide characters.`,
    );
  }
  return name;
}

/**
 * The comparison key of a cleaned name: letter case ignored the Unicode way. Upper- then lower-casing
 * folds pairs that a plain toLowerCase misses (for example "STRASSE" and "straße").
 */
export function nameKey(cleanedName: string): string {
  return cleanedName.toUpperCase().toLowerCase().normalize('NFC');
}

/** Guid of a type: derived from (tenant, normalised name), so a deleted and recreated name gets it back. */
export function typeGuid(tenant: string, key: string): string {
  return uuidv5(JSON.stringify(['entity-type', tenant, key]), GUID_NAMESPACE);
}

/**
 * Guid of the next type created under a released name: derived from the guid the name resolved to before the release,
 * so every instance computes the same one and each release of the name gives a new one.
 */
export function releasedNameGuid(tenant: string, key: string, previousGuid: string): string {
  return uuidv5(JSON.stringify(['entity-type-released', tenant, key, previousGuid]), GUID_NAMESPACE);
}

/** Guid of a platform attribute in a tenant (fixed, so every process derives the same one). */
export function platformAttributeGuid(tenant: string, name: string): string {
  return uuidv5(JSON.stringify(['platform-attribute', tenant, name]), GUID_NAMESPACE);
}
