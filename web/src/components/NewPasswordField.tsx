// The password of a new account (setup, an accepted invitation, an account an admin creates): the
// server's rule of at least 10 characters, said in the label and checked before sending.
export function NewPasswordField({ value, onChange, inline = false, name }: { value: string; onChange(password: string): void; inline?: boolean; name?: string }) {
  return (
    <label className={inline ? 'field inline' : 'field'}>
      <span>Password (at least 10 characters)</span>
      <input name={name} type="password" minLength={10} value={value} onChange={(e) => onChange(e.target.value)} autoComplete="new-password" required />
    </label>
  );
}
