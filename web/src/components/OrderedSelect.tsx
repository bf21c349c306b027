import { Select, Tag } from 'antd';
import { useTranslation } from 'react-i18next';

interface OrderedSelectProps {
  value?: string[];
  onChange?: (value: string[]) => void;
  options: { value: string; label: string }[];
  maxCount?: number;
  loading?: boolean;
  'data-testid'?: string;
}

/** A multiple select whose chosen items are numbered in the order picked (the order they are tried in). */
export function OrderedSelect({ value, onChange, options, maxCount, loading, 'data-testid': testId }: OrderedSelectProps) {
  const { t } = useTranslation();
  const chosen = value ?? [];
  return (
    <Select<string[]>
      mode="multiple"
      value={chosen}
      onChange={(next) => onChange?.(next)}
      options={options}
      maxCount={maxCount}
      loading={loading}
      data-testid={testId}
      optionFilterProp="label"
      tagRender={({ label, value: item, closable, onClose }) => (
        <Tag
          closable={closable}
          onClose={onClose}
          onMouseDown={(e) => {
            e.preventDefault();
            e.stopPropagation();
          }}
          style={{ marginInlineEnd: 4 }}
        >
          {t('common.orderedItem', { n: chosen.indexOf(String(item)) + 1, label: String(label) })}
        </Tag>
      )}
    />
  );
}
