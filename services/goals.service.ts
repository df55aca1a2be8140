// Filled in this session (issue 5).
import type { ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime.ts';

export default function createGoalsService(_runtime: Runtime): ServiceSchema {
  return { name: 'goals', settings: { rest: '/' }, actions: {} };
}
