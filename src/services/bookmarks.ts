// Neo4j bookmarks for clients (issue #12, the cluster path): a write's answer carries the bookmark of its commit in
// the Neo4j-Bookmark header; a later request to any instance may send it back, and that request's reads wait until
// the server answering them has applied the write (a follower of a Neo4j cluster may lag behind its leader). The
// header value is signed and bound to the tenant like a page cursor, so a client can only send back what this API
// issued to its tenant: no made-up bookmark reaches Neo4j.
import { refuse } from '../errors.js';
import { type CursorCodec, createCursorCodec } from './cursor.js';

export const BOOKMARK_HEADER = 'neo4j-bookmark';
/** The most bookmarks one header value may carry (a commit has one; a cluster with several databases a few). */
const MAX_BOOKMARKS = 16;

export interface BookmarkCodec {
  encode(tenant: string, bookmarks: readonly string[]): string;
  /** The bookmarks of the request's header (none without one), or throws invalid_bookmark. */
  decode(tenant: string, header: string | string[] | undefined): string[];
}

export function createBookmarkCodec(secret: string): BookmarkCodec {
  // A key of its own: a page cursor is not a bookmark, nor the other way round.
  const codec: CursorCodec = createCursorCodec(`bookmark:${secret}`);
  const invalid = () =>
    refuse('invalid_bookmark', 'The Neo4j-Bookmark header was not issued by this API to your tenant.');
  return {
    encode: (tenant, bookmarks) => codec.encode(tenant, JSON.stringify(bookmarks)),
    decode(tenant, header) {
      if (header === undefined || header === '') return [];
      if (Array.isArray(header)) throw refuse('invalid_bookmark', 'Send one Neo4j-Bookmark header.');
      let text: string;
      try {
        text = codec.decode(tenant, header.trim());
      } catch {
        throw invalid();
      }
      const list: unknown = JSON.parse(text);
      if (
        !Array.isArray(list) ||
        list.length > MAX_BOOKMARKS ||
        !list.every((b) => typeof b === 'string' && b.length > 0 && b.length <= 512)
      ) {
        throw invalid();
      }
      return list as string[];
    },
  };
}
