import {
  getNamedType,
  getOperationAST,
  GraphQLError,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  Kind,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  TypeNameMetaFieldDef,
  visit,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import type { ErrorLocation, ValidationIssue } from '../shared/errors.js';
import { ValidationError } from '../shared/errors.js';
import { unstorableTextIssues } from '../shared/well-formed-text.js';
import { errorExtensions } from './errors.js';

/** How much one GraphQL operation may ask for (CATCHMENT_GRAPHQL_MAX_COST / _MAX_DEPTH). */
export interface OperationLimits {
  /** Most fields an operation may resolve: each selected field is 1, its sub-selection counted once per item its `limit` asks for. */
  maxCost: number;
  /** Most levels of nested fields. */
  maxDepth: number;
}

/** The page size of every list of this API when a client does not say (collections, searches, jobs, messages). */
const DEFAULT_LIST_SIZE = 100;

/** A refusal before execution: the operation asks for more than the limits allow. */
export const QUERY_TOO_COMPLEX = 'QUERY_TOO_COMPLEX';

type Variables = Readonly<Record<string, unknown>> | null | undefined;

/**
 * Why an operation must not run, checked on every transport before execution (Apollo, graphql-sse,
 * the REST facade's documents): text the service cannot store in its variables or literals (a
 * BAD_USER_INPUT naming each place), then depth and cost (QUERY_TOO_COMPLEX). Null when it may run;
 * documents that do not name one operation are left to GraphQL's own validation.
 */
export function operationRefusal(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, variables: Variables, limits: OperationLimits): GraphQLError | null {
  const issues = [...unstorableTextIssues(variables ?? {}, []), ...literalTextIssues(document)];
  if (issues.length) {
    const error = new ValidationError(issues);
    return new GraphQLError(error.message, { extensions: errorExtensions(error)! });
  }
  const operation = getOperationAST(document, operationName);
  if (!operation) return null;
  const rootType = schema.getRootType(operation.operation);
  if (!rootType) return null;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const defaults = new Map<string, ValueNode>();
  for (const definition of operation.variableDefinitions ?? []) if (definition.defaultValue) defaults.set(definition.variable.name.value, definition.defaultValue);

  const meter = new OperationMeter(schema, fragments, { provided: variables ?? {}, defaults }, limits);
  const { cost, depth } = meter.measure(operation.selectionSet, rootType, 1);
  const count = (n: number) => n.toLocaleString('en');
  let reason: string | null = null;
  if (depth > limits.maxDepth) reason = `it nests fields more than ${limits.maxDepth} levels deep, the limit`;
  else if (meter.exceeded || cost > limits.maxCost) {
    const resolved = meter.exceeded ? `more than ${count(limits.maxCost)}` : count(cost);
    reason = `it would resolve ${resolved} fields, over the limit of ${count(limits.maxCost)} (each selected field, aliases included, counts once per item its parent's limit asks for, ${DEFAULT_LIST_SIZE} when unsaid)`;
  }
  if (!reason) return null;
  return new GraphQLError(`Query too complex: ${reason}. Ask for fewer fields, aliases or items per request.`, { extensions: { code: QUERY_TOO_COMPLEX } });
}

interface Measure {
  cost: number;
  depth: number;
}

/**
 * Cost and depth of a selection set with fragments expanded. Every selection visited adds at least
 * 1 to the cost, so the walk stops as soon as it has visited more than `maxCost` of them: nested
 * fragment spreads (a few lines that expand exponentially) cost no more to refuse than to count.
 */
class OperationMeter {
  exceeded = false;
  private visits = 0;

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly fragments: Map<string, FragmentDefinitionNode>,
    private readonly variables: { provided: Readonly<Record<string, unknown>>; defaults: Map<string, ValueNode> },
    private readonly limits: OperationLimits,
    private readonly spreading = new Set<string>(),
  ) {}

  measure(selectionSet: SelectionSetNode, parentType: GraphQLNamedType | undefined, level: number): Measure {
    let cost = 0;
    let depth = 0;
    for (const selection of selectionSet.selections) {
      if (this.exceeded) break;
      if (++this.visits > this.limits.maxCost) {
        this.exceeded = true;
        break;
      }
      let inner: Measure;
      if (selection.kind === Kind.FIELD) {
        const field = this.fieldOf(parentType, selection.name.value);
        const children = selection.selectionSet && level < this.limits.maxDepth ? this.measure(selection.selectionSet, field && getNamedType(field.type), level + 1) : null;
        inner = { cost: 1 + (children ? this.listSize(selection, field) * children.cost : 0), depth: 1 + (children?.depth ?? (selection.selectionSet ? 1 : 0)) };
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? this.schema.getType(selection.typeCondition.name.value) : parentType;
        inner = this.measure(selection.selectionSet, type, level);
      } else {
        const name = selection.name.value;
        const fragment = this.fragments.get(name);
        // A fragment spreading itself is refused by validation; here it only must not loop.
        if (!fragment || this.spreading.has(name)) continue;
        this.spreading.add(name);
        inner = this.measure(fragment.selectionSet, this.schema.getType(fragment.typeCondition.name.value), level);
        this.spreading.delete(name);
      }
      cost += inner.cost;
      depth = Math.max(depth, inner.depth);
    }
    return { cost, depth };
  }

  private fieldOf(parentType: GraphQLNamedType | undefined, name: string): GraphQLField<unknown, unknown> | undefined {
    if (name === TypeNameMetaFieldDef.name) return TypeNameMetaFieldDef;
    if (parentType === this.schema.getQueryType()) {
      if (name === SchemaMetaFieldDef.name) return SchemaMetaFieldDef;
      if (name === TypeMetaFieldDef.name) return TypeMetaFieldDef;
    }
    return isObjectType(parentType) || isInterfaceType(parentType) ? parentType.getFields()[name] : undefined;
  }

  /**
   * Items a field's sub-selection is resolved for: its `limit` argument, or the `limit` of an input
   * object argument (searches take `input: {limit}`); the schema's default or the API's page size
   * when the request leaves it out; 1 for fields without one.
   */
  private listSize(node: FieldNode, field: GraphQLField<unknown, unknown> | undefined): number {
    if (!field) return 1;
    for (const argument of field.args) {
      const given = node.arguments?.find((candidate) => candidate.name.value === argument.name)?.value;
      if (argument.name === 'limit') return this.size(given === undefined ? undefined : this.valueOf(given), argument.defaultValue);
      const inputType = getNamedType(argument.type);
      const limitField = isInputObjectType(inputType) ? inputType.getFields().limit : undefined;
      if (!limitField) continue;
      const input = given === undefined ? undefined : this.valueOf(given);
      const limit = input !== null && typeof input === 'object' ? (input as Record<string, unknown>).limit : undefined;
      return this.size(limit, limitField.defaultValue);
    }
    return 1;
  }

  private size(value: unknown, schemaDefault: unknown): number {
    const chosen = value ?? schemaDefault ?? DEFAULT_LIST_SIZE;
    return typeof chosen === 'number' && Number.isFinite(chosen) ? Math.max(1, Math.floor(chosen)) : DEFAULT_LIST_SIZE;
  }

  /** A literal's or variable's value, as far as sizes go (numbers and the objects holding them). */
  private valueOf(node: ValueNode): unknown {
    switch (node.kind) {
      case Kind.VARIABLE: {
        const name = node.name.value;
        if (name in this.variables.provided) return this.variables.provided[name];
        const fallback = this.variables.defaults.get(name);
        return fallback ? this.valueOf(fallback) : undefined;
      }
      case Kind.INT:
      case Kind.FLOAT:
        return Number(node.value);
      case Kind.OBJECT:
        return Object.fromEntries(node.fields.map((field) => [field.name.value, this.valueOf(field.value)]));
      default:
        return undefined;
    }
  }
}

/** Text literals of a document (arguments and variable defaults) that the service could not store. */
function literalTextIssues(document: DocumentNode): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const walk = (node: ValueNode, loc: ErrorLocation) => {
    if (node.kind === Kind.STRING) issues.push(...unstorableTextIssues(node.value, loc));
    else if (node.kind === Kind.LIST) node.values.forEach((item, index) => walk(item, [...loc, index]));
    else if (node.kind === Kind.OBJECT) for (const field of node.fields) walk(field.value, [...loc, field.name.value]);
  };
  visit(document, {
    Argument: (node) => walk(node.value, [node.name.value]),
    VariableDefinition: (node) => {
      if (node.defaultValue) walk(node.defaultValue, [node.variable.name.value]);
    },
  });
  return issues;
}
