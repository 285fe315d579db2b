import { execute, OverlappingFieldsCanBeMergedRule, parse, specifiedRules, validate, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { DomainError, ValidationError } from '../shared/errors.js';
import type { GraphQLContext } from './context.js';
import { operationRefusal, type OperationLimits } from './operation-limits.js';

/**
 * The agent event union selects same-named fields of different types on different members
 * (`durationMs` is Int! on some, Int on others), which execution handles but the overlap rule refuses.
 */
const RULES = specifiedRules.filter((rule) => rule !== OverlappingFieldsCanBeMergedRule);

/**
 * A fixed GraphQL document that a transport runs in-process (the REST facade, the MCP tools): parsed,
 * validated and checked against the operation limits once, at startup, so requests only execute it
 * (graphql.execute does not validate). Its list sizes are bounded by the transport's own input
 * rules, so the limits are checked with lists at their default size. Throws when it does not fit.
 */
export function compileOperation(schema: GraphQLSchema, name: string, document: string, limits: OperationLimits): DocumentNode {
  const parsed = parse(document);
  const errors = validate(schema, parsed, RULES);
  if (errors.length) throw new Error(`${name}: its GraphQL document does not match the schema: ${errors.map((e) => e.message).join('; ')}`);
  const refusal = operationRefusal(schema, parsed, undefined, undefined, limits);
  if (refusal) throw new Error(`${name}: ${refusal.message} (raise CATCHMENT_GRAPHQL_MAX_COST / _MAX_DEPTH)`);
  return parsed;
}

/**
 * What a transport throws for a result with errors (null without): its first error, as the
 * DomainError a resolver raised (the transport words it); one without a path is a request GraphQL
 * itself refused (variables its types reject), as bad input.
 */
export function operationError(result: ExecutionResult): Error | null {
  const error = result.errors?.[0];
  if (!error) return null;
  if (error.originalError instanceof DomainError) return error.originalError;
  if (!error.path) return new ValidationError([{ loc: [], msg: error.message, type: 'value_error' }]);
  return error.originalError ?? error;
}

/** Runs a compiled query or mutation with a transport's context; a failure is thrown as operationError says. */
export async function runOperation<T>(schema: GraphQLSchema, document: DocumentNode, variableValues: Record<string, unknown>, context: GraphQLContext): Promise<T> {
  const result = await execute({ schema, document, variableValues, contextValue: context });
  const error = operationError(result);
  if (error) throw error;
  return result.data as T;
}
