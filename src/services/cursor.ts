// Opaque page cursors: signed with HMAC and bound to the tenant, so a forged, tampered or foreign cursor is refused.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { refuse } from '../errors.js';

/**
 * What a cursor pages through: a type list's cursor (no kind) is refused by a history, the change feed or an entity
 * listing, and each of theirs by the others. A list of one type's rows (its history, its entities) binds its
 * cursors to that type too (`of`): another type's list refuses them.
 */
export type CursorKind = 'history' | 'changes' | 'entities';

export interface CursorCodec {
  encode(tenant: string, position: string, kind?: CursorKind, of?: string): string;
  /** Returns the position, or throws invalid_cursor. */
  decode(tenant: string, cursor: string, kind?: CursorKind, of?: string): string;
}

export function createCursorCodec(secret: string): CursorCodec {
  const sign = (tenant: string, payload: string) =>
    createHmac('sha256', secret).update(tenant).update('\u0000').update(payload).digest();

  return {
    encode(tenant, position, kind, of) {
      const payload = Buffer.from(
        JSON.stringify({
          v: 1,
          p: position,
          ...(kind === undefined ? {} : { k: kind }),
          ...(of === undefined ? {} : { o: of }),
        }),
        'utf8',
      ).toString('base64url');
      return `${payload}.${sign(tenant, payload).toString('base64url')}`;
    },
    decode(tenant, cursor, kind, of) {
      const invalid = () => refuse('invalid_cursor', 'The cursor was not issued by this API.');
      if (cursor.length > 4096) throw invalid();
      const [payload, signature, extra] = cursor.split('.');
      if (!payload || !signature || extra !== undefined) throw invalid();
      const given = Buffer.from(signature, 'base64url');
      const expected = sign(tenant, payload);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
      try {
        const parsed: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
        if (
          typeof parsed === 'object' &&
          parsed !== null &&
          (parsed as { v?: unknown }).v === 1 &&
          typeof (parsed as { p?: unknown }).p === 'string' &&
          (parsed as { k?: unknown }).k === kind &&
          (parsed as { o?: unknown }).o === of
        ) {
          return (parsed as { p: string }).p;
        }
      } catch {
        // fall through
      }
      throw invalid();
    },
  };
}
