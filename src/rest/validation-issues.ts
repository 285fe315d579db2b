import type { ErrorObject } from 'ajv';
import type { ValidationIssue } from '../shared/errors.js';

/** openapi-backend validates one object whose top-level keys are these; the contract names them so. */
const LOCATION: Record<string, string> = { requestBody: 'body', query: 'query', path: 'path', headers: 'header', cookies: 'cookie' };

/** Ajv keyword → the error `type` names clients of this interface know (pydantic's vocabulary). */
function issueType(error: ErrorObject): string {
  switch (error.keyword) {
    case 'required':
      return 'missing';
    case 'additionalProperties':
      return 'extra_forbidden';
    case 'minLength':
      return 'string_too_short';
    case 'maxLength':
      return 'string_too_long';
    case 'pattern':
      return 'string_pattern_mismatch';
    case 'minimum':
    case 'exclusiveMinimum':
      return 'greater_than_equal';
    case 'maximum':
    case 'exclusiveMaximum':
      return 'less_than_equal';
    case 'enum':
    case 'const':
      return 'enum';
    case 'format':
      return `${String(error.params.format).replace(/-/g, '_')}_parsing`;
    case 'type': {
      const expected = String(error.params.type).split(',')[0];
      return { integer: 'int_type', number: 'float_type', boolean: 'bool_type', string: 'string_type', array: 'list_type', object: 'dict_type' }[expected!] ?? 'type_error';
    }
    default:
      return error.keyword;
  }
}

function issueMessage(error: ErrorObject): string {
  switch (error.keyword) {
    case 'required':
      return 'Field required';
    case 'additionalProperties':
      return 'Extra inputs are not permitted';
    default:
      return error.message ? error.message.charAt(0).toUpperCase() + error.message.slice(1) : 'Invalid value';
  }
}

/**
 * Turns Ajv errors into `{loc, msg, type}` items, `loc` starting with body/query/path. Errors of
 * `oneOf`/`anyOf` alternatives repeat what their branches say, so only the most specific are kept.
 */
export function validationIssues(errors: ErrorObject[]): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  // In `oneOf: [X, {type: 'null'}]`, a bad X also fails the null branch ("must be null"): that says
  // nothing the X errors do not, so it is dropped when they are there.
  const explained = (error: ErrorObject) =>
    error.keyword === 'type' && error.params.type === 'null' && errors.some((other) => other !== error && other.instancePath.startsWith(error.instancePath) && !(other.keyword === 'oneOf' || other.keyword === 'anyOf'));
  for (const error of errors) {
    if (explained(error)) continue;
    if (error.keyword === 'oneOf' || error.keyword === 'anyOf' || error.keyword === 'if') continue;
    const path = error.instancePath
      .split('/')
      .slice(1)
      .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
      .map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment));
    if (error.keyword === 'required') path.push(String(error.params.missingProperty));
    if (error.keyword === 'additionalProperties') path.push(String(error.params.additionalProperty));
    const [root, ...rest] = path;
    const loc = [LOCATION[String(root)] ?? 'body', ...rest];
    // A null where an object or a scalar was expected fails both the type and the "null" branch: keep one.
    const key = JSON.stringify(loc);
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push({ loc, msg: issueMessage(error), type: issueType(error) });
  }
  return issues;
}
