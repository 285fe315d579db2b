import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The console is built into web/dist (git-ignored) and served by the API server: index.html at `/`,
// assets under /console/. React's JSX goes through Vite's own esbuild transform (no plugin needed).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  esbuild: { jsx: 'automatic' },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true, chunkSizeWarningLimit: 1000 },
  logLevel: 'warn',
});
