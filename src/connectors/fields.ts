import type { ErrorLocation, ValidationIssue } from '../shared/errors.js';
import type { FieldSpec } from './connector.js';

const TYPE_ERROR: Record<FieldSpec['type'], string> = {
  string: 'string_type',
  integer: 'int_type',
  number: 'float_type',
  boolean: 'bool_type',
  array: 'list_type',
  object: 'dict_type',
};

function hasType(value: unknown, type: FieldSpec['type'] | NonNullable<FieldSpec['itemsType']>): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value);
  }
}

/**
 * Checks values against a connector's field specs: unknown fields, missing required ones, types,
 * enums and bounds. Returns the values with defaults filled in, and the issues found (`loc` under
 * `location`, e.g. ['config', 'path']).
 */
export function validateFields(
  specs: FieldSpec[],
  values: Record<string, unknown> | null | undefined,
  location: ErrorLocation,
): { value: Record<string, unknown>; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  const input = values ?? {};
  const value: Record<string, unknown> = {};
  const known = new Set(specs.map((spec) => spec.name));
  for (const name of Object.keys(input)) {
    if (!known.has(name)) issues.push({ loc: [...location, name], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
  }
  for (const spec of specs) {
    const given = input[spec.name];
    const loc = [...location, spec.name];
    if (given === undefined || given === null) {
      if (spec.required) issues.push({ loc, msg: 'Field required', type: 'missing' });
      else if (spec.default !== undefined) value[spec.name] = structuredClone(spec.default);
      continue;
    }
    if (!hasType(given, spec.type)) {
      issues.push({ loc, msg: `Input should be of type ${spec.type}`, type: TYPE_ERROR[spec.type] });
      continue;
    }
    if (spec.type === 'array' && spec.itemsType) {
      (given as unknown[]).forEach((item, index) => {
        if (!hasType(item, spec.itemsType!)) issues.push({ loc: [...loc, index], msg: `Input should be of type ${spec.itemsType}`, type: TYPE_ERROR[spec.itemsType!] });
      });
    }
    if (spec.enumValues && !spec.enumValues.includes(given as string | number)) {
      issues.push({ loc, msg: `Input should be one of ${spec.enumValues.join(', ')}`, type: 'enum' });
    }
    if (typeof given === 'number') {
      if (spec.minimum !== undefined && given < spec.minimum) issues.push({ loc, msg: `Input should be greater than or equal to ${spec.minimum}`, type: 'greater_than_equal' });
      if (spec.maximum !== undefined && given > spec.maximum) issues.push({ loc, msg: `Input should be less than or equal to ${spec.maximum}`, type: 'less_than_equal' });
    }
    if (typeof given === 'string' && spec.required && given.trim() === '') {
      issues.push({ loc, msg: 'String should not be empty', type: 'string_too_short' });
    }
    value[spec.name] = given;
  }
  return { value, issues };
}

/** The catalog's rendering of field specs: `{ fields: [{ name, title, description, type, required, items_type, is_secret, enum_values }] }`. */
export function describeFields(specs: FieldSpec[]) {
  return {
    fields: specs.map((spec) => ({
      name: spec.name,
      title: spec.title,
      description: spec.description ?? null,
      type: spec.type,
      required: spec.required,
      itemsType: spec.itemsType ?? null,
      isSecret: spec.isSecret,
      enumValues: spec.enumValues?.map(String) ?? null,
      default: spec.default === undefined ? null : JSON.stringify(spec.default),
    })),
  };
}
