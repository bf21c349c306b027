import { InputNumber } from 'antd';
import { useState } from 'react';

/**
 * A number edited in place in a table cell: saved (one PATCH of that field) on Enter or when the field loses
 * focus, only when it changed and is a whole number within [min, max]; Escape puts the saved value back.
 */
export function InlineNumber({
  value,
  min,
  max,
  label,
  saving,
  onSave,
}: {
  value: number;
  min: number;
  max: number;
  label: string;
  saving?: boolean;
  onSave: (next: number) => void;
}) {
  const [draft, setDraft] = useState<number | null>(value);
  const [seen, setSeen] = useState(value);
  if (seen !== value) {
    // The server's value changed (saved here or elsewhere): show it.
    setSeen(value);
    setDraft(value);
  }
  const commit = () => {
    if (draft === null || !Number.isInteger(draft) || draft < min || draft > max) {
      setDraft(value);
      return;
    }
    if (draft !== value) onSave(draft);
  };
  return (
    <InputNumber
      size="small"
      aria-label={label}
      min={min}
      max={max}
      precision={0}
      value={draft}
      disabled={saving}
      variant="borderless"
      style={{ width: 84 }}
      onChange={(v) => setDraft(typeof v === 'number' ? v : null)}
      onPressEnter={commit}
      onBlur={commit}
      onKeyDown={(e) => {
        if (e.key === 'Escape') setDraft(value);
      }}
      onClick={(e) => e.stopPropagation()}
    />
  );
}
