// Checks a value against a fastest-validator schema outside an action call (batch items, plugin
// settings), with the same validator Moleculer uses for action params.
import { Validators } from 'moleculer';

export interface Issue {
  field: string;
  message: string;
  actual?: unknown;
}

const validator = new Validators.Fastest({});

/** Returns a checker giving the validation issues of a value (empty when valid). */
export function compileChecker(schema: Record<string, unknown>): (value: unknown) => Issue[] {
  // fastest-validator's checker answers true or the list of issues (and converts values in place).
  const check = validator.compile(schema) as unknown as (value: unknown) => true | Issue[];
  return (value) => {
    const result = check(value);
    return result === true ? [] : result.map((i) => ({ field: i.field ?? '', message: i.message, actual: i.actual }));
  };
}
