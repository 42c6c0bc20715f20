// Executes only operations whose static cost (with their variables) is within bounds, gives each a budget while it
// runs, and measures its answer before it is serialised (schema/limits.ts says what each bound is). A refused
// operation's answer is the refusal alone; an answer within bounds is serialised with its stored JSON texts spliced
// in where measuring it put their markers (json/raw.ts).
import { GraphQLError, getOperationAST, getVariableValues } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import type { RequestContext } from '../context.js';
import { AppError, refusalExtensions } from '../errors.js';
import { OperationBudget } from '../fairness/operation-budget.js';
import { stringifyMarked } from '../json/raw.js';
import { IDEMPOTENCY_LIMITS } from '../services/keyed-requests.js';
import { GRAPHQL_LIMITS, measureAnswer, operationCost, refusal } from './limits.js';

/** A refusal as a GraphQL error, the reason in extensions like every other refusal. */
export const refusalError = (error: AppError) =>
  createGraphQLError(error.message, {
    extensions: refusalExtensions(error.reason, error.status),
  });

/** `queryTimeMs`: wall-clock time a query may run (mutations are not cut short once they may have written). */
export function operationGuardPlugin(options: { queryTimeMs: number }): Plugin<RequestContext> {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      let cost: number;
      try {
        cost = operationCost(
          args.schema,
          args.document,
          args.variableValues ?? undefined,
          args.operationName ?? undefined,
        );
      } catch (error) {
        if (error instanceof AppError) {
          setResultAndStopExecution({ errors: [refusalError(error)] });
          return undefined;
        }
        // Variables that do not fit their types: execution refuses the whole operation with the usual GraphQL error,
        // at no cost (and so does an operation the document does not hold).
        if (refusedWhole(args)) return undefined;
        // Any other reason the cost cannot be worked out stops the operation: it never runs unmeasured. (An explicit
        // null sent through a variable with a default, into a non-null argument, makes the cost walk throw while
        // graphql-js answers every other field: the aliases beside it would run without a cost check or a budget, and
        // a few of them on a type with large enumerations could take the process past its heap.)
        setResultAndStopExecution({
          errors: [
            error instanceof GraphQLError
              ? error
              : createGraphQLError('The operation cannot be checked against its cost bound.'),
          ],
        });
        return undefined;
      }
      if (cost > GRAPHQL_LIMITS.maxCost) {
        setResultAndStopExecution({ errors: [refusalError(refusal.tooCostly(cost))] });
        return undefined;
      }
      const operation = getOperationAST(args.document, args.operationName);
      const ctx = args.contextValue as RequestContext;
      // Under an Idempotency-Key the answer is stored: the operation may load and answer no more than that holds.
      const keyed = ctx.keyed?.pending !== undefined;
      const maxAnswerBytes = keyed
        ? Math.min(GRAPHQL_LIMITS.maxAnswerBytes, IDEMPOTENCY_LIMITS.maxAnswerBytes)
        : GRAPHQL_LIMITS.maxAnswerBytes;
      const budget = new OperationBudget(
        operation?.operation === 'query',
        { ...GRAPHQL_LIMITS, maxAnswerBytes, queryTimeMs: options.queryTimeMs },
        refusal,
      );
      ctx.operation.budget = budget;
      /** The answer becomes a refusal: a keyed write it made is rolled back, its answer not stored. */
      const refused = (error: AppError) => {
        if (ctx.keyed?.scope) ctx.keyed.scope.discard = true;
        return { data: null, errors: [refusalError(error)] };
      };
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) return;
          if (budget.exceeded) {
            setResult(refused(budget.exceeded));
            return;
          }
          const texts: string[] = [];
          const bytes = measureAnswer(result, maxAnswerBytes, texts);
          ctx.operation.answerBytes = bytes;
          if (bytes > maxAnswerBytes) {
            setResult(refused(refusal.tooLarge(`more than ${(maxAnswerBytes / 1024 / 1024).toFixed(0)} MB`)));
            return;
          }
          // Serialised with the stored JSON texts it holds spliced in where their markers stand (json/raw.ts); Yoga
          // calls a result's own stringify when it has one (the compiled query's is plain JSON.stringify).
          if (texts.length > 0) {
            (result as { stringify?: (value: unknown) => string }).stringify = (value) =>
              stringifyMarked(value, texts);
          }
        },
      };
    },
  };
}

/** Whether execution refuses the operation whole, before any field runs: its variables do not fit, or it is absent. */
function refusedWhole(args: {
  schema: Parameters<typeof getVariableValues>[0];
  document: Parameters<typeof getOperationAST>[0];
  variableValues?: Record<string, unknown> | null | undefined;
  operationName?: string | null | undefined;
}): boolean {
  const operation = getOperationAST(args.document, args.operationName);
  if (!operation) return true;
  const coerced = getVariableValues(
    args.schema,
    operation.variableDefinitions ?? [],
    args.variableValues ?? {},
    {
      maxErrors: 1,
    },
  );
  return coerced.errors !== undefined;
}
