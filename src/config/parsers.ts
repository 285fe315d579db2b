/*
 * The parsers of environment values the settings table (settings.ts) uses, and the error a bad value
 * raises.
 */

/** A configuration problem that must stop the process; the message names the variable. */
export class ConfigError extends Error {}

export type Parser<T> = (raw: string, name: string) => T;

export interface Setting<T> {
  /** Environment variable name. */
  env: string;
  /** Default when unset or empty; `undefined` means "not set" (optional). */
  default?: T;
  parse: Parser<T>;
  /** One line for the README configuration table. */
  description: string;
}

export const text: Parser<string> = (raw) => raw;

export function integer(min: number, max: number): Parser<number> {
  return (raw, name) => {
    if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
    const value = Number(raw);
    if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
    return value;
  };
}

export function oneOf<T extends string>(...values: T[]): Parser<T> {
  return (raw, name) => {
    if (!(values as string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
    return raw as T;
  };
}

export function url(...protocols: string[]): Parser<string> {
  return (raw, name) => {
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new ConfigError(`${name} must be a URL, got an unparsable value`);
    }
    if (!protocols.includes(parsed.protocol)) {
      throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got ${parsed.protocol}`);
    }
    return raw;
  };
}

export const boolean: Parser<boolean> = (raw, name) => {
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
};

/** `*`, or comma-separated exact origins (scheme, host and port) such as `https://app.example.com`. */
export const corsOrigins: Parser<readonly string[] | '*'> = (raw, name) => {
  if (raw.trim() === '*') return '*';
  const origins = raw.split(',').map((entry) => entry.trim()).filter(Boolean);
  for (const origin of origins) {
    if (!URL.canParse(origin) || !/^https?:$/.test(new URL(origin).protocol) || new URL(origin).origin !== origin) {
      throw new ConfigError(`${name} must be * or comma-separated origins like https://app.example.com (scheme, host and port only), got "${origin}"`);
    }
  }
  return origins;
};

/** `s3://<bucket>` or `s3://<bucket>/<prefix>`: the bucket named as S3 allows (3 to 63 lower-case letters, digits, '.', '-'). */
export const objectStoreUrl: Parser<{ bucket: string; prefix: string }> = (raw, name) => {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(raw.trim());
  if (!match) throw new ConfigError(`${name} must be s3://<bucket> or s3://<bucket>/<prefix>, got "${raw}"`);
  return { bucket: match[1]!, prefix: (match[2] ?? '').replace(/^\/+|\/+$/g, '') };
};

export const base64Key: Parser<Buffer> = (raw, name) => {
  const key = Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new ConfigError(`${name} must be 32 bytes encoded as base64 (openssl rand -base64 32)`);
  return key;
};

export const apiKeyValue: Parser<string> = (raw, name) => {
  if (raw.length < 24 || /\s/.test(raw)) throw new ConfigError(`${name} must be at least 24 characters without spaces`);
  return raw;
};
