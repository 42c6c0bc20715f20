// How a purge that could not run is logged (src/jobs/purge.ts): the database unreachable or the service warming up
// is a warning without a stack (readiness reports the outage); anything else is an error with its stack.
import type { Logger } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { refuse } from '../../src/errors.js';
import { logFailure } from '../../src/jobs/purge.js';

const fakeLogger = () => ({ warn: vi.fn(), error: vi.fn() });

describe('a purge that could not run', () => {
  it('refused as storage_unavailable (down or warming): one warning, no error, no stack', () => {
    const logger = fakeLogger();
    logFailure(
      logger as unknown as Logger,
      refuse.storageUnavailable(),
      'daily purge',
      'the next firing runs it',
    );
    expect(logger.error).not.toHaveBeenCalled();
    expect(logger.warn).toHaveBeenCalledTimes(1);
    const [fields, message] = logger.warn.mock.calls[0] as [Record<string, unknown>, string];
    expect(fields).toEqual({ reason: 'storage_unavailable' });
    expect(message).toMatch(/^daily purge not run: .*\(the next firing runs it\)$/);
  });

  it('any other failure (another refusal, an unexpected error): an error with the error itself', () => {
    for (const err of [refuse.storageBusy(), new Error('boom')]) {
      const logger = fakeLogger();
      logFailure(logger as unknown as Logger, err, 'background purge', 'the daily job will finish it');
      expect(logger.warn).not.toHaveBeenCalled();
      expect(logger.error).toHaveBeenCalledWith(
        { err },
        'background purge failed; the daily job will finish it',
      );
    }
  });
});
