// A site's time zone as a searchable list (the ARIA combobox pattern): typing a few letters of a
// city or region narrows the list ("berl" → Europe/Berlin), the arrow keys move through it, Enter
// or a click picks, Escape closes and goes back to the zone picked before. Leaving the field keeps
// a zone typed in full, or the only one left in the list.
import { ChevronDown } from 'lucide-react';
import { type KeyboardEvent, type ReactNode, useEffect, useId, useMemo, useRef, useState } from 'react';
import { exactZone, matchZones, zoneOffset } from './time-zones.ts';

export function TimeZoneField({
  label,
  value,
  onChange,
  error,
  hint,
  name = 'timezone',
}: {
  label: ReactNode;
  /** The zone picked, or '' while the text names none. */
  value: string;
  onChange(zone: string): void;
  error?: string;
  hint?: ReactNode;
  name?: string;
}) {
  const id = useId();
  const [text, setText] = useState(value);
  // What was typed since the list opened; null shows every zone, with the picked one in view.
  const [filter, setFilter] = useState<string | null>(null);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(0);
  const list = useRef<HTMLDivElement>(null);
  // The last zone picked, which Escape goes back to (value is '' while the text names no zone).
  const picked = useRef(value);
  const matches = useMemo(() => matchZones(filter ?? ''), [filter]);

  // A zone set from outside (a saved site, a reset form) shows in the field.
  useEffect(() => {
    if (value) {
      picked.current = value;
      setText(value);
    }
  }, [value]);

  useEffect(() => {
    if (open) list.current?.children[active]?.scrollIntoView({ block: 'nearest' });
  }, [open, active]);

  const show = (from: number) => {
    setOpen(true);
    setActive(Math.max(0, from));
  };
  const pick = (zone: string) => {
    picked.current = zone;
    setText(zone);
    setFilter(null);
    setOpen(false);
    onChange(zone);
  };
  const type = (next: string) => {
    setText(next);
    setFilter(next);
    show(0);
    onChange(exactZone(next) ?? '');
  };
  const leave = () => {
    setOpen(false);
    const zone = exactZone(text) ?? (filter && matches.length === 1 ? matches[0] : null);
    if (zone) pick(zone);
  };

  const onKeyDown = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      if (!open) show(filter === null ? matches.indexOf(value) : 0);
      else setActive((i) => Math.min(matches.length - 1, Math.max(0, i + (e.key === 'ArrowDown' ? 1 : -1))));
    } else if (e.key === 'Enter' && open && matches[active]) {
      // Picking from the open list does not submit the form.
      e.preventDefault();
      pick(matches[active]);
    } else if (e.key === 'Escape' && open) {
      e.preventDefault();
      setOpen(false);
      setFilter(null);
      if (picked.current) pick(picked.current);
    }
  };

  const listId = `${id}-zones`;
  const errorId = `${id}-error`;
  const hintId = `${id}-hint`;
  const describedBy = [hint ? hintId : null, error ? errorId : null].filter(Boolean).join(' ') || undefined;
  const optionId = (i: number) => `${id}-zone-${i}`;
  return (
    <div className="field">
      <label className="field" htmlFor={`${id}-input`}>
        <span>{label}</span>
      </label>
      <div className="combobox">
        <input
          id={`${id}-input`}
          name={name}
          role="combobox"
          aria-autocomplete="list"
          aria-expanded={open}
          aria-controls={listId}
          aria-activedescendant={open && matches[active] ? optionId(active) : undefined}
          aria-invalid={error ? true : undefined}
          aria-describedby={describedBy}
          autoComplete="off"
          spellCheck={false}
          value={text}
          onChange={(e) => type(e.target.value)}
          onKeyDown={onKeyDown}
          onClick={() => !open && show(filter === null ? matches.indexOf(value) : 0)}
          onBlur={leave}
        />
        <button
          type="button"
          className="combobox-toggle"
          tabIndex={-1}
          aria-label="Show the whole list"
          // Keeps the focus in the field, so the list stays tied to it.
          onMouseDown={(e) => e.preventDefault()}
          onClick={() => {
            if (open) return setOpen(false);
            setFilter(null);
            show(matchZones('').indexOf(value));
          }}
        >
          <ChevronDown aria-hidden size={16} />
        </button>
        {/* The options take no focus of their own: the field keeps it and points at the active one (aria-activedescendant). */}
        <div id={listId} role="listbox" aria-label="Suggestions" className="combobox-list" ref={list} hidden={!open}>
          {open &&
            matches.map((zone, i) => (
              <div
                key={zone}
                id={optionId(i)}
                role="option"
                tabIndex={-1}
                aria-selected={i === active}
                className={zone === value ? 'picked' : undefined}
                onMouseDown={(e) => {
                  e.preventDefault();
                  pick(zone);
                }}
                onMouseMove={() => i !== active && setActive(i)}
              >
                <span>{zone}</span>
                <span className="muted small">{zoneOffset(zone)}</span>
              </div>
            ))}
        </div>
        {open && matches.length === 0 && <p className="combobox-list muted small">No time zone matches “{text.trim()}”</p>}
      </div>
      {hint && (
        <span className="field-hint" id={hintId}>
          {hint}
        </span>
      )}
      {error && (
        <span className="field-error" id={errorId}>
          {error}
        </span>
      )}
    </div>
  );
}
