// Jest transform: erase TypeScript types with Node's own stripper, so tests run exactly the code
// Node 24 runs in production (erasable syntax only; no separate compiler semantics).
const { stripTypeScriptTypes } = require('node:module');

module.exports = {
  process(source, filename) {
    if (!/\.(ts|tsx|mts)$/.test(filename)) return { code: source };
    return { code: stripTypeScriptTypes(source, { mode: 'strip' }) };
  },
};
