// Filled in this session (issue 4).
import type { ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime.ts';

export default function createSecurityService(_runtime: Runtime): ServiceSchema {
  return { name: 'security', settings: { rest: '/' }, actions: {} };
}
