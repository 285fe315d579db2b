/**
 * The server's environment given on a bench's command line as `--env NAME=VALUE` (repeatable), for
 * A/B runs of a setting without editing the bench.
 */
export function envOption(pairs: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    pairs.map((pair) => {
      const equals = pair.indexOf('=');
      if (equals <= 0) throw new Error(`--env takes NAME=VALUE, not ${pair}`);
      return [pair.slice(0, equals), pair.slice(equals + 1)];
    }),
  );
}
