// ESM + TypeScript through swc; decorators need legacy mode with metadata for type-graphql and MikroORM.
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', {
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
        target: 'es2023',
        keepClassNames: true,
      },
      module: { type: 'es6' },
    }],
  },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  // Process-spawning and PGlite tests take tens of seconds on a loaded 2-core machine; a hang still fails.
  testTimeout: 120000,
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.cjs'],
};
