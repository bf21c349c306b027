import { DeleteOutlined, PlusOutlined } from '@ant-design/icons';
import { Button, Form, Input, InputNumber, Space, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { decimalRules } from '../../../lib/validation';
import { SIZE_KEY } from './priceRows';

/** A row's prices that do not fit a column: per-image prices by size (and quality), and long-prompt tiers. */
export function PriceExtras({ row }: { row: number }) {
  const { t } = useTranslation();
  return (
    <Space align="start" size="large" wrap>
      <div>
        <Typography.Text strong>{t('pricingUnits.sizes')}</Typography.Text>
        <Form.List name={[row, 'sizes']}>
          {(fields, { add, remove }) => (
            <>
              {fields.map((f) => (
                <Space key={f.key} align="baseline">
                  <Form.Item name={[f.name, 'size']} rules={[{ pattern: SIZE_KEY, message: t('pricingUnits.sizeInvalid') }]}>
                    <Input placeholder={t('pricingUnits.sizeKey')} style={{ width: 260 }} aria-label={t('pricingUnits.sizeKey')} />
                  </Form.Item>
                  <Form.Item name={[f.name, 'price']} rules={decimalRules(t, true)}>
                    <Input inputMode="decimal" style={{ width: 110 }} aria-label={t('pricingUnits.per_image')} />
                  </Form.Item>
                  <Button type="text" danger aria-label={t('common.remove')} icon={<DeleteOutlined />} onClick={() => remove(f.name)} />
                </Space>
              ))}
              <Button type="dashed" size="small" icon={<PlusOutlined />} onClick={() => add({ size: '', price: '' })}>
                {t('pricingUnits.addSize')}
              </Button>
            </>
          )}
        </Form.List>
      </div>
      <div>
        <Typography.Text strong>{t('pricingUnits.tiers')}</Typography.Text>
        <Form.List name={[row, 'tiers']}>
          {(fields, { add, remove }) => (
            <>
              {fields.map((f) => (
                <Space key={f.key} align="baseline">
                  <Form.Item name={[f.name, 'above_prompt_tokens']} rules={[{ required: true, message: t('validation.required') }]}>
                    <InputNumber min={1} max={100_000_000} placeholder={t('pricingUnits.abovePromptTokens')} aria-label={t('pricingUnits.abovePromptTokens')} style={{ width: 170 }} />
                  </Form.Item>
                  <Form.Item name={[f.name, 'input']} rules={decimalRules(t)}>
                    <Input inputMode="decimal" placeholder={t('modelPricing.input')} aria-label={t('modelPricing.input')} style={{ width: 100 }} />
                  </Form.Item>
                  <Form.Item name={[f.name, 'output']} rules={decimalRules(t)}>
                    <Input inputMode="decimal" placeholder={t('modelPricing.output')} aria-label={t('modelPricing.output')} style={{ width: 100 }} />
                  </Form.Item>
                  <Button type="text" danger aria-label={t('common.remove')} icon={<DeleteOutlined />} onClick={() => remove(f.name)} />
                </Space>
              ))}
              <Button type="dashed" size="small" icon={<PlusOutlined />} onClick={() => add({ above_prompt_tokens: 200000, input: '', output: '' })}>
                {t('pricingUnits.addTier')}
              </Button>
            </>
          )}
        </Form.List>
      </div>
    </Space>
  );
}
