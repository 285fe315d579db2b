#!/usr/bin/env node
// Runs the TypeScript sources through swc (decorator metadata included): no build step to forget.
import { register } from 'node:module';
import { pathToFileURL } from 'node:url';

register('@swc-node/register/esm', pathToFileURL(import.meta.filename));
await import('../src/main.ts');
