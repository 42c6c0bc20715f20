// Name normalisation and guid derivation: how a type name becomes the key it is compared and identified by.
import { v5 as uuidv5 } from 'uuid';
import { refuse } from '../errors.js';

/** Longest accepted name, in Unicode code points, after trimming. */
export const MAX_NAME_LENGTH = 256;

// Fixed namespace for the service's derived identifiers (UUIDv5).
const GUID_NAMESPACE = '3f0b5a7e-5c1d-4b8e-9a57-6c2f1e0d4a11';

/** The name as displayed: trimmed of surrounding whitespace, Unicode NFC. Refuses empty and over-long names. */
// C0 and C1 control characters (tab, newline... inside a name), which no display of a name can show.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Characters no display shows, or that turn the text's direction: Unicode's default-ignorable code points (zero-width
 * spaces and joiners, the soft hyphen, variation selectors, tag characters...), the bidirectional controls among them,
 * every other format character (General_Category Cf: the Arabic number signs U+0600-U+0605, U+06DD, U+0890,
 * U+110BD...), and the characters that show as blank space without being spaces (U+2800 BRAILLE PATTERN BLANK). A
 * name holding one could look like another ("table" + U+200D beside the system type "table"), so it is refused.
 */
export const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}\u2800]/u;

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
    const code = (hidden[0].codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0');
    throw refuse(
      'invalid_field',
      `The name contains an invisible or direction-changing character (U+${code} at character ${[...name.slice(0, hidden.index)].length + 1}); a name may not hide characters.`,
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
