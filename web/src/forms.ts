// A form's submit handler: the page stays where it is (no browser submission), then `action` runs.
import type { FormEvent } from 'react';

export const submitHandler = (action: () => void) => (e: FormEvent) => {
  e.preventDefault();
  action();
};
