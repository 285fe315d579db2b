import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs on stdout. Secrets are redacted by path as a second line of defence:
 * the code never passes keys, tokens or credentials to the logger on purpose.
 */
/** `fd` 2 keeps stdout free for the CLI's JSON output. */
export function createLogger(level: string, fd: 1 | 2 = 1): Logger {
  return pino({
    level,
    base: { service: 'catchment' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'req.headers["x-api-key"]',
        'req.headers.authorization',
        'req.headers.cookie',
        '*.api_key',
        '*.apiKey',
        '*.secret',
        '*.password',
        '*.credentials',
        '*.access_token',
      ],
      censor: '[redacted]',
    },
  }, pino.destination({ fd, sync: fd === 2 }));
}
