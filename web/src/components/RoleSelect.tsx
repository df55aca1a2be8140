// Choosing a role (instance, team or site): the roles offered in order, the chosen one by name.
import { useId } from 'react';

interface RoleChoice<R extends string> {
  roles: readonly R[];
  value: R;
  onChange(role: NoInfer<R>): void;
}

export function RoleSelect<R extends string>({ roles, value, onChange, label, id }: RoleChoice<R> & { label?: string; id?: string }) {
  return (
    <select id={id} aria-label={label} value={value} onChange={(e) => onChange(e.target.value as R)}>
      {roles.map((r) => (
        <option key={r}>{r}</option>
      ))}
    </select>
  );
}

/** A role picker as a field of an inline form, labelled "Role". */
export function RoleField<R extends string>(choice: RoleChoice<R>) {
  const id = useId();
  return (
    <label className="field inline" htmlFor={id}>
      <span>Role</span>
      <RoleSelect id={id} {...choice} />
    </label>
  );
}
