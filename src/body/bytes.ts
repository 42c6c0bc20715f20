// A request body's bytes as they arrive (body/read.ts reads them): a few small chunks kept as they came, or, past the
// first LARGE_BODY_BYTES, copied into blocks of our own, each drawn from the request memory before it is made; at
// the end one buffer of the body's length, the blocks' memory detached at once (not left to the collector).
import { BODY_BLOCK_BYTES } from '../model/doors.js';

/** The bytes of one body as they arrive: a few small chunks, or blocks of our own (each drawn from memory first). */
export class BodyBytes {
  private chunks: Buffer[] = [];
  private blocks: Buffer[] = [];
  size = 0;

  constructor(private readonly largeBytes: number) {}

  /** Bytes a block to come needs drawn first (0: none, the chunk fits what is held). */
  needs(length: number): number {
    if (this.size + length <= this.largeBytes) return 0;
    const held = this.blocks.length * BODY_BLOCK_BYTES;
    return this.size + length <= held
      ? 0
      : Math.ceil((this.size + length - held) / BODY_BLOCK_BYTES) * BODY_BLOCK_BYTES;
  }

  add(chunk: Buffer) {
    if (this.blocks.length === 0 && this.size + chunk.length <= this.largeBytes) {
      this.chunks.push(chunk);
      this.size += chunk.length;
      return;
    }
    if (this.blocks.length === 0) {
      // (the small chunks so far go first into the blocks, counted again as they are copied)
      this.size = 0;
      for (const small of this.chunks.splice(0)) this.copy(small);
    }
    this.copy(chunk);
  }

  /** Copies `chunk` into the blocks (allocated as needed: what needs() said was drawn for them). */
  private copy(chunk: Buffer) {
    let from = 0;
    while (from < chunk.length) {
      const at = this.size % BODY_BLOCK_BYTES;
      if (at === 0) this.blocks.push(Buffer.allocUnsafeSlow(BODY_BLOCK_BYTES));
      const block = this.blocks[this.blocks.length - 1] as Buffer;
      const n = chunk.copy(block, at, from);
      from += n;
      this.size += n;
    }
  }

  /** The whole body as one buffer; the blocks are given back (their memory detached). */
  whole(): Buffer {
    if (this.blocks.length === 0)
      return this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.size);
    const body = Buffer.allocUnsafeSlow(this.size);
    this.blocks.forEach((block, i) => {
      block.copy(body, i * BODY_BLOCK_BYTES, 0, Math.min(BODY_BLOCK_BYTES, this.size - i * BODY_BLOCK_BYTES));
    });
    this.drop();
    made.add(body);
    return body;
  }

  /** Drops what is held; the blocks' memory is detached at once. */
  drop() {
    for (const block of this.blocks.splice(0)) detach(block);
    this.chunks = [];
  }
}

/** Frees a buffer's memory now (its ArrayBuffer detached) rather than at the next full collection. */
export const detach = (buffer: Buffer) =>
  (buffer.buffer as ArrayBuffer & { transfer(length: number): ArrayBuffer }).transfer(0);

/** The large bodies' buffers readBody made, each its own (releaseBody detaches only those). */
const made = new WeakSet<Buffer>();
/**
 * Gives a large body's bytes back at once, once it has been parsed: a buffer of its own (what a large body is read
 * into) is detached, its memory freed now rather than at the next full collection. Only a buffer readBody made is
 * detached (a small body's chunks are the stream's own). Nothing may read `body` after.
 */
export function releaseBody(body: Buffer) {
  if (made.delete(body)) detach(body);
}
