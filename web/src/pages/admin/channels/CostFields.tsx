import { DeleteOutlined, PlusOutlined } from '@ant-design/icons';
import { AutoComplete, Button, Col, Flex, Form, Input, Radio, Row, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { decimalRules } from '../../../lib/validation';
import { COST_FIELDS, type CostMode } from './channelForm';

const EMPTY_OVERRIDE = { model: '', input: '', output: '', cache_read: '', cache_write: '', per_call: '' };

/** The channel form's upstream cost: a price per 1M tokens / per call or a multiple of the sell price, and per-model prices. */
export function CostFields({ models }: { models: string[] }) {
  const { t } = useTranslation();
  const form = Form.useFormInstance();
  const mode: CostMode = Form.useWatch('cost_mode', form) ?? 'none';
  const rules = decimalRules(t);

  return (
    <>
      <Typography.Paragraph type="secondary">{t('costs.hint')}</Typography.Paragraph>
      <Form.Item name="cost_mode" label={t('costs.mode')}>
        <Radio.Group
          optionType="button"
          data-testid="cost-mode"
          options={(['none', 'price', 'ratio'] as const).map((m) => ({ value: m, label: t(`costs.mode_${m}`) }))}
        />
      </Form.Item>
      {mode === 'price' ? (
        <Row gutter={16}>
          {COST_FIELDS.map((field) => (
            <Col xs={12} md={8} xl={4} key={field}>
              <Form.Item
                name={['cost_price', field]}
                label={t(`costs.${field}`)}
                rules={rules}
                tooltip={field === 'per_call' ? t('costs.perCallHint') : t('costs.perMillion')}
              >
                <Input inputMode="decimal" prefix="$" data-testid={`cost-price-${field}`} />
              </Form.Item>
            </Col>
          ))}
        </Row>
      ) : null}
      {mode === 'ratio' ? (
        <Form.Item
          name="cost_ratio"
          label={t('costs.ratio')}
          extra={t('costs.ratioHint')}
          rules={decimalRules(t, true)}
          style={{ maxWidth: 240 }}
        >
          <Input inputMode="decimal" prefix="×" data-testid="cost-ratio" />
        </Form.Item>
      ) : null}
      <Typography.Text strong>{t('costs.overrides')}</Typography.Text>
      <Typography.Paragraph type="secondary">{t('costs.overridesHint')}</Typography.Paragraph>
      <Form.List name="cost_prices">
        {(fields, { add, remove }) => (
          <Flex vertical gap={8}>
            {fields.map((field) => (
              <Flex key={field.key} gap={8} align="start" wrap data-testid="cost-override-row">
                <Form.Item
                  name={[field.name, 'model']}
                  style={{ flex: '2 1 160px', marginBottom: 0 }}
                  rules={[
                    { required: true, whitespace: true, message: t('validation.required') },
                    {
                      validator: (_, value: string) => {
                        const rows: { model?: string }[] = form.getFieldValue('cost_prices') ?? [];
                        const n = rows.filter((r) => r?.model?.trim() === value?.trim()).length;
                        return n > 1 ? Promise.reject(new Error(t('modelPricing.duplicate'))) : Promise.resolve();
                      },
                    },
                  ]}
                >
                  <AutoComplete
                    placeholder={t('costs.model')}
                    aria-label={t('costs.model')}
                    options={models.map((m) => ({ value: m, label: m }))}
                    filterOption={(input, option) => String(option?.value ?? '').toLowerCase().includes(input.toLowerCase())}
                  />
                </Form.Item>
                {COST_FIELDS.map((f) => (
                  <Form.Item key={f} name={[field.name, f]} style={{ flex: '1 1 80px', marginBottom: 0 }} rules={rules}>
                    <Input inputMode="decimal" placeholder={t(`costs.${f}`)} aria-label={t(`costs.${f}`)} />
                  </Form.Item>
                ))}
                <Button type="text" danger aria-label={t('common.remove')} icon={<DeleteOutlined />} onClick={() => remove(field.name)} />
              </Flex>
            ))}
            <Button type="dashed" icon={<PlusOutlined />} onClick={() => add({ ...EMPTY_OVERRIDE })} data-testid="add-cost-override">
              {t('costs.addOverride')}
            </Button>
          </Flex>
        )}
      </Form.List>
    </>
  );
}
