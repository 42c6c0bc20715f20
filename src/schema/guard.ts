// Executes only operations whose static cost (with their variables) is within bounds, gives each a budget while it
// runs, and measures its answer before it is serialised (schema/limits.ts says what each bound is). A refused
// operation's answer is the refusal alone.
import { getOperationAST } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import type { RequestContext } from '../context.js';
import { AppError, refusalExtensions } from '../errors.js';
import { OperationBudget } from '../operation-budget.js';
import { answerBytes, GRAPHQL_LIMITS, operationCost, refusal } from './limits.js';

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
        // Variables that do not fit their types: execution refuses them with the usual GraphQL error, at no cost.
        return undefined;
      }
      if (cost > GRAPHQL_LIMITS.maxCost) {
        setResultAndStopExecution({ errors: [refusalError(refusal.tooCostly(cost))] });
        return undefined;
      }
      const operation = getOperationAST(args.document, args.operationName);
      const budget = new OperationBudget(
        operation?.operation === 'query',
        { ...GRAPHQL_LIMITS, queryTimeMs: options.queryTimeMs },
        refusal,
      );
      (args.contextValue as RequestContext).operation.budget = budget;
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) return;
          if (budget.exceeded) {
            setResult({ data: null, errors: [refusalError(budget.exceeded)] });
            return;
          }
          const bytes = answerBytes(result, GRAPHQL_LIMITS.maxAnswerBytes);
          if (bytes > GRAPHQL_LIMITS.maxAnswerBytes) {
            setResult({
              data: null,
              errors: [
                refusalError(refusal.tooLarge(`more than ${GRAPHQL_LIMITS.maxAnswerBytes / 1024 / 1024} MB`)),
              ],
            });
          }
        },
      };
    },
  };
}
