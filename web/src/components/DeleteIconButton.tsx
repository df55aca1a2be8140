// The trash-can button of an item in a list (a goal, a funnel): asks first, then deletes.
import { Trash2 } from 'lucide-react';

export function DeleteIconButton({ label, question, onDelete }: { label: string; question: string; onDelete(): void }) {
  return (
    <button
      type="button"
      className="icon-button"
      aria-label={label}
      onClick={() => {
        if (confirm(question)) onDelete();
      }}
    >
      <Trash2 aria-hidden size={16} />
    </button>
  );
}
