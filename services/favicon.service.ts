// Filled in this session (issue 5).
import type { ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime.ts';

export default function createFaviconService(_runtime: Runtime): ServiceSchema {
  return { name: 'favicon', settings: { rest: '/' }, actions: {} };
}
