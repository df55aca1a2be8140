// The Location header of a 201: where the created resource now lives. An action that creates
// declares it once, as a path template (`location` on the action, read by the gateway), e.g.
// '/api/sites/:id/goals/{goal.id}': `:name` is a request parameter, `{a.b}` a field of the answer.
// A list of templates is tried in order, for answers that create one of several kinds of thing.

export type LocationTemplate = string | readonly string[];

const PLACEHOLDER = /:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_.]*)\}/g;

function read(source: unknown, path: string): unknown {
  let value = source;
  for (const key of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

const usable = (value: unknown): value is string | number => (typeof value === 'string' && value !== '') || typeof value === 'number';

/** The first template whose every placeholder has a value, filled in (values percent-encoded); undefined when none has. */
export function createdLocation(template: LocationTemplate, params: Record<string, unknown>, answer: unknown): string | undefined {
  for (const candidate of typeof template === 'string' ? [template] : template) {
    let complete = true;
    const filled = candidate.replace(PLACEHOLDER, (_match, param: string | undefined, field: string | undefined) => {
      const value = param === undefined ? read(answer, field!) : params[param];
      if (!usable(value)) {
        complete = false;
        return '';
      }
      return encodeURIComponent(String(value));
    });
    if (complete) return filled;
  }
  return undefined;
}

/**
 * moleculer-web's hook after a call (`onAfterCall`): a 201 gets the Location its action declares,
 * which moleculer-web sends from `ctx.meta.$location`.
 */
export function locateCreated(ctx: { meta: object }, _route: unknown, req: { $action?: { location?: LocationTemplate }; $params?: Record<string, unknown> }, _res: unknown, data: unknown) {
  const meta = ctx.meta as { $statusCode?: number; $location?: string };
  const template = req.$action?.location;
  if (template && meta.$statusCode === 201) meta.$location = createdLocation(template, req.$params ?? {}, data);
  return data;
}
