import { z } from 'zod';
import type { ErrorLocation, ValidationIssue } from '../../shared/errors.js';
import type { Connector } from '../connector.js';

/**
 * The platform's side of a connector's schemas: parsing what users send (and what was stored) into
 * the contract's 422 items, and the catalog's field lists derived from the same schemas.
 */

/** What a parse gives: the parsed value (defaults applied), meaningful only when `issues` is empty. */
export interface Parsed<T> {
  value: T;
  issues: ValidationIssue[];
}

/** The catalog's description of one field (GraphQL `SourceField`; REST snake-cases it and decodes `default`). */
export interface DescribedField {
  name: string;
  title: string;
  description: string | null;
  type: FieldType;
  required: boolean;
  itemsType: FieldType | null;
  isSecret: boolean;
  enumValues: string[] | null;
  /** JSON-encoded, as GraphQL carries it. */
  default: string | null;
}

export type FieldType = 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object';

/** Metadata a connector puts on its fields with `.meta()`: `secret` values are sealed at rest and never returned. */
export interface FieldMeta {
  title?: string;
  description?: string;
  secret?: boolean;
}

/**
 * A string that must hold something besides whitespace (hosts, paths, keys): blank is refused as
 * `string_too_short`, as a missing value would be.
 */
export const nonBlankString = () => z.string().refine((value) => value.trim() !== '', { message: 'String should not be empty', params: { type: 'string_too_short' } });

/**
 * The base URL of an API a source talks to (its own service, an Enterprise or self-managed instance,
 * a proxy): http(s), without user info, query or fragment (credentials belong in credentials, and
 * endpoints are appended to it), one spelling per server (no trailing '/') because cursors and
 * credential targets compare it. `example` shows the expected form in the error message.
 */
export const httpBaseUrl = (example: string) =>
  z
    .string()
    .trim()
    .refine((value) => {
      try {
        const url = new URL(value);
        return (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password && !url.search && !url.hash;
      } catch {
        return false;
      }
    }, `Must be an http(s) URL without user info, query or fragment, such as ${example}`)
    .transform((value) => value.replace(/\/+$/, ''));

/**
 * `max_file_bytes` of the sources that read files: the largest file read (a larger one is skipped and
 * reported as left out), at most 100 MiB, since a file is read whole into memory for text extraction.
 */
export const maxFileBytes = (defaultBytes: number, description = 'Larger files are skipped.') =>
  z
    .int()
    .min(1)
    .max(100 * 1024 * 1024)
    .default(defaultBytes)
    .meta({ title: 'Largest file read (bytes)', description });

/** Parses a connection's config with the connector's `config` schema (absent config is `{}`). */
export function parseConfig<Config>(connector: Connector<Config>, value: unknown, loc: ErrorLocation = ['config']): Parsed<Config> {
  return parseWith(connector.config, value, loc);
}

/** The schema of the credentials a user gives directly: the `fields` of the source, or its pasted token; null when it takes none. */
export function credentialsSchemaOf<Credentials>(connector: Connector<unknown, Credentials>): z.ZodType<Credentials> | null {
  const { auth } = connector;
  if (auth.kind === 'fields') return auth.credentials;
  if (auth.kind === 'oauth2') return auth.pasted?.credentials ?? null;
  return null;
}

/**
 * Parses directly given credentials with the connector's credentials schema (see credentialsSchemaOf);
 * `value: null` without issues for sources that take none.
 */
export function parseCredentials<Credentials>(
  connector: Connector<unknown, Credentials>,
  value: unknown,
  loc: ErrorLocation = ['authentication', 'credentials'],
): Parsed<Credentials | null> {
  const schema = credentialsSchemaOf(connector);
  if (!schema) return { value: null, issues: [] };
  return parseWith(schema, value, loc);
}

/**
 * The stored cursor (or checkpoint) parsed by the connector's `cursor` schema; null when there is
 * none, the connector keeps none, or it no longer parses (the connector changed: a full sync is the
 * safe answer).
 */
export function parseCursor<Cursor>(connector: Connector<unknown, unknown, Cursor>, stored: unknown): Cursor | null {
  if (!connector.cursor || stored === null || stored === undefined) return null;
  const parsed = connector.cursor.safeParse(stored);
  return parsed.success ? parsed.data : null;
}

/** The catalog's `{ fields }` of an object schema: one entry per property, in declaration order. */
export function describeSchema(schema: z.ZodType): { fields: DescribedField[] } {
  const shape = objectShape(schema);
  if (!shape) throw new Error('Only object schemas describe a source\'s fields');
  return {
    fields: Object.entries(shape).map(([name, field]) => {
      const { node, meta, defaultValue } = unwrap(field);
      const type = fieldType(node);
      const items = type === 'array' ? unwrap((node as z.ZodArray).element as z.ZodType).node : null;
      const enumValues = enumValuesOf(items ?? node);
      return {
        name,
        title: meta.title ?? name,
        description: meta.description ?? null,
        type,
        // A field that takes undefined is optional (its default, if any, fills it in).
        required: !field.safeParse(undefined).success,
        itemsType: items ? fieldType(items) : null,
        isSecret: meta.secret === true,
        enumValues: enumValues?.map(String) ?? null,
        default: defaultValue === undefined ? null : JSON.stringify(defaultValue),
      };
    }),
  };
}

/**
 * Top-level nulls count as absent (a client clearing a field gets its default), as the contract's
 * optional fields read; anything else is parsed as given.
 */
function parseWith<T>(schema: z.ZodType<T>, value: unknown, loc: ErrorLocation): Parsed<T> {
  const input = value === null || value === undefined ? {} : isPlainObject(value) ? Object.fromEntries(Object.entries(value).filter(([, field]) => field !== null)) : value;
  const parsed = schema.safeParse(input);
  if (parsed.success) return { value: parsed.data, issues: [] };
  return { value: input as T, issues: parsed.error.issues.flatMap((issue) => toValidationIssues(issue, schema, input, loc)) };
}

const TYPE_ERRORS: Record<FieldType, string> = {
  string: 'string_type',
  integer: 'int_type',
  number: 'float_type',
  boolean: 'bool_type',
  array: 'list_type',
  object: 'dict_type',
};

/** zod's `expected` names, for values whose schema cannot be found (inside unions and the like). */
const EXPECTED_TYPES: Record<string, FieldType> = { string: 'string', int: 'integer', number: 'number', boolean: 'boolean', array: 'array', object: 'object', record: 'object' };

/** One zod issue as the contract's 422 items, named as the previous hand-written checker named them (pydantic's types). */
function toValidationIssues(issue: z.core.$ZodIssue, schema: z.ZodType, input: unknown, location: ErrorLocation): ValidationIssue[] {
  const path = issue.path.filter((key): key is string | number => typeof key !== 'symbol');
  const loc = [...location, ...path];
  switch (issue.code) {
    case 'invalid_type': {
      if (valueAt(input, path) === undefined) return [{ loc, msg: 'Field required', type: 'missing' }];
      const node = schemaAt(schema, path);
      const type = (node && fieldTypeOrNull(node)) ?? EXPECTED_TYPES[issue.expected] ?? null;
      return [{ loc, msg: `Input should be of type ${type ?? issue.expected}`, type: type ? TYPE_ERRORS[type] : `${issue.expected}_type` }];
    }
    case 'unrecognized_keys':
      return issue.keys.map((key) => ({ loc: [...loc, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }));
    case 'invalid_value':
      return [{ loc, msg: `Input should be one of ${issue.values.map(String).join(', ')}`, type: 'enum' }];
    case 'too_small':
      if (issue.origin === 'number' || issue.origin === 'int' || issue.origin === 'bigint') {
        return [issue.inclusive ? { loc, msg: `Input should be greater than or equal to ${issue.minimum}`, type: 'greater_than_equal' } : { loc, msg: `Input should be greater than ${issue.minimum}`, type: 'greater_than' }];
      }
      if (issue.origin === 'string') return [{ loc, msg: Number(issue.minimum) <= 1 ? 'String should not be empty' : `String should have at least ${issue.minimum} characters`, type: 'string_too_short' }];
      return [{ loc, msg: `List should have at least ${issue.minimum} items`, type: 'too_short' }];
    case 'too_big':
      if (issue.origin === 'number' || issue.origin === 'int' || issue.origin === 'bigint') {
        return [issue.inclusive ? { loc, msg: `Input should be less than or equal to ${issue.maximum}`, type: 'less_than_equal' } : { loc, msg: `Input should be less than ${issue.maximum}`, type: 'less_than' }];
      }
      if (issue.origin === 'string') return [{ loc, msg: `String should have at most ${issue.maximum} characters`, type: 'string_too_long' }];
      return [{ loc, msg: `List should have at most ${issue.maximum} items`, type: 'too_long' }];
    case 'invalid_format':
      return [{ loc, msg: issue.message, type: issue.format === 'url' ? 'url_parsing' : 'string_pattern_mismatch' }];
    case 'custom': {
      const type = issue.params?.type;
      return [{ loc, msg: issue.message, type: typeof type === 'string' ? type : 'value_error' }];
    }
    default:
      return [{ loc, msg: issue.message, type: 'value_error' }];
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function valueAt(input: unknown, path: (string | number)[]): unknown {
  let current = input;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

/** The schema of the value at `path` (through objects and arrays), null when it cannot be told. */
function schemaAt(schema: z.ZodType, path: (string | number)[]): z.ZodType | null {
  let current: z.ZodType | null = unwrap(schema).node;
  for (const key of path) {
    if (!current) return null;
    const shape = objectShape(current);
    if (shape && typeof key === 'string') current = shape[key] ? unwrap(shape[key]).node : null;
    else if (current instanceof z.ZodArray && typeof key === 'number') current = unwrap(current.element as z.ZodType).node;
    else return null;
  }
  return current;
}

function objectShape(schema: z.ZodType): Record<string, z.ZodType> | null {
  const node = unwrap(schema).node;
  return node instanceof z.ZodObject ? (node.shape as Record<string, z.ZodType>) : null;
}

/**
 * The schema under optional/nullable/default/readonly wrappers and the input side of pipes, with the
 * metadata found on every layer (outer layers win) and the default value.
 */
function unwrap(schema: z.ZodType): { node: z.ZodType; meta: FieldMeta; defaultValue: unknown } {
  let node = schema;
  let defaultValue: unknown;
  const layers: FieldMeta[] = [];
  for (;;) {
    const meta = z.globalRegistry.get(node);
    if (meta) layers.push(meta as FieldMeta);
    if (node instanceof z.ZodDefault || node instanceof z.ZodPrefault) {
      if (defaultValue === undefined) defaultValue = node.def.defaultValue;
      node = node.def.innerType as z.ZodType;
    } else if (node instanceof z.ZodOptional || node instanceof z.ZodNullable || node instanceof z.ZodReadonly || node instanceof z.ZodNonOptional || node instanceof z.ZodCatch) {
      node = node.def.innerType as z.ZodType;
    } else if (node instanceof z.ZodPipe) {
      node = node.def.in as z.ZodType;
    } else break;
  }
  return { node, meta: Object.assign({}, ...layers.reverse()) as FieldMeta, defaultValue };
}

function fieldTypeOrNull(node: z.ZodType): FieldType | null {
  if (node instanceof z.ZodString) return 'string';
  if (node instanceof z.ZodNumber) return node.isInt ? 'integer' : 'number';
  if (node instanceof z.ZodBoolean) return 'boolean';
  if (node instanceof z.ZodArray) return 'array';
  if (node instanceof z.ZodObject || node instanceof z.ZodRecord) return 'object';
  const values = enumValuesOf(node);
  if (values && values.length > 0) {
    if (values.every((value) => typeof value === 'string')) return 'string';
    if (values.every((value) => Number.isInteger(value))) return 'integer';
    if (values.every((value) => typeof value === 'number')) return 'number';
    if (values.every((value) => typeof value === 'boolean')) return 'boolean';
  }
  return null;
}

function fieldType(node: z.ZodType): FieldType {
  const type = fieldTypeOrNull(node);
  if (!type) throw new Error(`A source's field schema must be a string, number, boolean, enum, array or object (got ${node.def.type})`);
  return type;
}

function enumValuesOf(node: z.ZodType): unknown[] | null {
  if (node instanceof z.ZodEnum) return node.options as unknown[];
  if (node instanceof z.ZodLiteral) return [...node.values];
  return null;
}
