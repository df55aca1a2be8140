// Jest runs native ESM (node --experimental-vm-modules); .ts files are type-stripped like Node does.
/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  transform: { '\\.ts$': '<rootDir>/test/support/strip-types-transform.cjs' },
  // Plugins (the examples too) keep their own tests beside them, as a plugin's author would.
  testMatch: ['<rootDir>/test/{unit,integration,external,e2e,cluster}/**/*.test.ts', '<rootDir>/plugins/**/*.test.ts'],
  // Generous: a suite that starts instances shares two cores with the Chromium and chDB work of others.
  testTimeout: 60000,
  setupFiles: ['<rootDir>/test/support/env.ts'],
  // Every answer of a Plumb instance is checked against its own OpenAPI document.
  setupFilesAfterEnv: ['<rootDir>/test/support/contract-setup.ts'],
};
