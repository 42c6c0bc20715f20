// What one GraphQL operation has spent while it runs: objects materialised, bytes of large values loaded, and
// wall-clock time (queries only). The bounds and their refusals are GraphQL's (schema/limits.ts); this is the
// meter resolvers and the executor read, kept on the request context.
import type { AppError } from '../errors.js';

export interface BudgetLimits {
  maxObjects: number;
  maxAnswerBytes: number;
  queryTimeMs: number;
}

export interface BudgetRefusals {
  tooLarge(what: string): AppError;
  tooSlow(): AppError;
}

/**
 * What one operation has spent while it runs. `charge` is called by the resolvers that materialise objects or
 * load large values, before they do; once a bound is passed every later charge throws too, and the operation's
 * answer is replaced by the refusal (see the guard plugin).
 */
export class OperationBudget {
  objects = 0;
  loadedBytes = 0;
  exceeded: AppError | null = null;
  private readonly deadline: number;

  constructor(
    readonly timed: boolean,
    readonly limits: BudgetLimits,
    private readonly refusals: BudgetRefusals,
  ) {
    this.deadline = performance.now() + limits.queryTimeMs;
  }

  /** Milliseconds left for a database statement of this operation (undefined when it is not timed). */
  remainingMs(): number | undefined {
    if (!this.timed) return undefined;
    return Math.max(1, Math.ceil(this.deadline - performance.now()));
  }

  charge(objects: number, bytes = 0) {
    if (this.exceeded) throw this.exceeded;
    this.objects += objects;
    this.loadedBytes += bytes;
    if (this.objects > this.limits.maxObjects) {
      this.exceeded = this.refusals.tooLarge(
        `more than ${this.limits.maxObjects.toLocaleString('en-US')} objects`,
      );
    } else if (this.loadedBytes > this.limits.maxAnswerBytes) {
      this.exceeded = this.refusals.tooLarge(
        `more than ${this.limits.maxAnswerBytes / 1024 / 1024} MB of values`,
      );
    } else if (this.timed && performance.now() > this.deadline) {
      this.exceeded = this.refusals.tooSlow();
    }
    if (this.exceeded) throw this.exceeded;
  }

  /** Marks the operation as out of time (a statement it sent was stopped by its timeout). */
  expire(): AppError {
    this.exceeded ??= this.refusals.tooSlow();
    return this.exceeded;
  }
}
