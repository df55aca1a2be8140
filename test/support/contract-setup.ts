// Every test file's fetch() checks what Plumb instances answer against their published contract
// (test/support/contract.ts), so the whole suite validates the OpenAPI document as it runs.
import { contractFetch } from './contract.ts';

globalThis.fetch = contractFetch as typeof fetch;
