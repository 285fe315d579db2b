import { Writable } from 'node:stream';
import { pino, type Level } from 'pino';

/** The fields every pino JSON line has; a test names the others it reads by extending it. */
export interface LogLine {
  level: number;
  msg: string;
}

/**
 * A pino logger whose lines are kept for the test to read: parsed (`lines`) and as written (`raw`,
 * to check that a secret appears nowhere, whatever the field).
 */
export function capturingLogger<Line extends LogLine = LogLine>(level: Level = 'debug') {
  const lines: Line[] = [];
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      raw.push(String(chunk));
      lines.push(JSON.parse(String(chunk)) as Line);
      done();
    },
  });
  return { logger: pino({ level }, stream), lines, raw };
}
