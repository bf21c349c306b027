import { DeleteOutlined, PlusOutlined } from '@ant-design/icons';
import { Button, Flex, Form, Input } from 'antd';
import type { Rule } from 'antd/es/form';
import { useTranslation } from 'react-i18next';

export interface KeyValueRow {
  key: string;
  value: string;
}

interface KeyValueEditorProps {
  /** Form field name holding `KeyValueRow[]`. */
  name: string | (string | number)[];
  keyPlaceholder: string;
  valuePlaceholder: string;
  addLabel: string;
  valueRules?: Rule[];
  /** Extra rules for the key, after "required". */
  keyRules?: Rule[];
}

/** Structured editor for a string → string map, inside an antd Form. */
export function KeyValueEditor({
  name,
  keyPlaceholder,
  valuePlaceholder,
  addLabel,
  valueRules,
  keyRules = [],
}: KeyValueEditorProps) {
  const { t } = useTranslation();
  return (
    <Form.List name={name}>
      {(fields, { add, remove }) => (
        <Flex vertical gap={8}>
          {fields.map((field) => (
            <Flex key={field.key} gap={8} align="start">
              <Form.Item
                name={[field.name, 'key']}
                style={{ flex: 1, marginBottom: 0 }}
                rules={[{ required: true, whitespace: true, message: t('validation.required') }, ...keyRules]}
              >
                <Input placeholder={keyPlaceholder} />
              </Form.Item>
              <Form.Item
                name={[field.name, 'value']}
                style={{ flex: 1, marginBottom: 0 }}
                rules={valueRules ?? [{ required: true, message: t('validation.required') }]}
              >
                <Input placeholder={valuePlaceholder} />
              </Form.Item>
              <Button
                type="text"
                danger
                aria-label={t('common.remove')}
                icon={<DeleteOutlined />}
                onClick={() => remove(field.name)}
              />
            </Flex>
          ))}
          <Button type="dashed" icon={<PlusOutlined />} onClick={() => add({ key: '', value: '' })}>
            {addLabel}
          </Button>
        </Flex>
      )}
    </Form.List>
  );
}

/** Record → rows for the editor. */
export function toRows(record: Record<string, unknown> | null | undefined): KeyValueRow[] {
  return Object.entries(record ?? {}).map(([key, value]) => ({
    key,
    value: typeof value === 'string' ? value : JSON.stringify(value),
  }));
}

/** Rows → record, trimming keys and skipping empty ones. */
export function fromRows(rows: KeyValueRow[] | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const row of rows ?? []) {
    const key = row?.key?.trim();
    if (key) out[key] = row.value ?? '';
  }
  return out;
}
