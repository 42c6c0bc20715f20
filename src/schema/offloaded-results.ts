// A large GraphQL answer (an 8 MB selection of enumerations, histories 500 records at a time) serialised off the
// event loop (json-offload.ts) instead of by one JSON.stringify that holds the service's one thread for tens of
// milliseconds while other tenants' requests wait. Only a plain answer is taken over: data without errors or
// extensions, sent as one of the JSON media types; Yoga's own processor keeps everything else (errors and their HTTP
// statuses included).
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { jsonOffload } from '../json-offload.js';

/** Yoga's regular (non-streaming) media types, in its order. */
const REGULAR_MEDIA_TYPES = ['application/graphql-response+json', 'application/json'];

/** Whether the client's media type (which may hold wildcards) takes the processor's. */
const matches = (processor: string, asked: string) => {
  const [type, sub] = processor.split('/');
  const [askedType, askedSub] = asked.split('/');
  return (askedType === '*' || askedType === type) && (askedSub === '*' || askedSub === sub);
};

/**
 * The regular media type Yoga answers a request with, as its result processors choose it (the last match over the
 * Accept header's utf-8 media types, read from the end; the regular processor comes last, so its match wins), or
 * undefined when none of them is acceptable.
 */
export function regularMediaType(accept: string | null): string | undefined {
  const asked: string[] = [];
  for (const part of (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',')) {
    const [mediaType, ...params] = part.split(';');
    const charset = params.find((p) => p.includes('charset=')) ?? 'charset=utf-8';
    if (mediaType !== undefined && charset === 'charset=utf-8') asked.push(mediaType);
  }
  let chosen: string | undefined;
  for (const mediaType of asked.reverse()) {
    for (const processor of REGULAR_MEDIA_TYPES) if (matches(processor, mediaType)) chosen = processor;
  }
  return chosen;
}

export function offloadedResultsPlugin(): Plugin {
  return {
    onResultProcess({ request, result, setResultProcessor }) {
      if (Array.isArray(result) || typeof result !== 'object' || result === null) return;
      if (Symbol.asyncIterator in result) return;
      const plain = result as ExecutionResult;
      if ((plain.errors?.length ?? 0) > 0 || plain.extensions !== undefined) return;
      if (!jsonOffload.isLarge(plain)) return;
      const mediaType = regularMediaType(request.headers.get('accept'));
      if (mediaType === undefined) return;
      // The answer's text is its data's (a compiled operation's result carries its own serialiser, a function that
      // JSON leaves out and that cannot be handed to the thread).
      const answer = { data: plain.data };
      setResultProcessor(
        async (_result, fetchAPI) =>
          new fetchAPI.Response(asBytes(await jsonOffload.serialise(answer, true)), {
            status: 200,
            headers: { 'Content-Type': `${mediaType}; charset=utf-8` },
          }),
        mediaType,
      );
    },
  };
}

/** The same bytes as a plain Uint8Array (a Response body), not a copy. */
const asBytes = (b: Buffer) => new Uint8Array(b.buffer as ArrayBuffer, b.byteOffset, b.byteLength);
