#!/usr/bin/env node
// Runs the TypeScript sources through swc (decorator metadata included): no build step to forget.
import { register } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

// The package's own compiler settings, wherever the command runs from (swc-node reads the cwd's by default).
process.env.SWC_NODE_PROJECT ??= fileURLToPath(new URL('../tsconfig.json', import.meta.url));
register('@swc-node/register/esm', pathToFileURL(import.meta.filename));
await import('../src/main.ts');
