import { DeleteOutlined, DownloadOutlined, ImportOutlined, PlusOutlined, SaveOutlined, UndoOutlined } from '@ant-design/icons';
import { App, Button, Form, Input, Table, Typography } from 'antd';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useAdminPricing, useSavePricing } from '../../../api/pricing';
import { PageHeader } from '../../../components/PageHeader';
import { QueryError } from '../../../components/QueryError';
import { downloadFile } from '../../../lib/download';
import { decimalRules } from '../../../lib/validation';
import { PricingImportModal } from './PricingImportModal';

import { PriceExtras } from './PriceExtras';
import { cleanPriceRows, EMPTY_ROW, TOKEN_FIELDS, toFormRows, UNIT_FIELDS, type PriceFormRow } from './priceRows';

/** The whole price table, edited in place and saved in one PUT. */
export default function ModelPricingPage() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const pricing = useAdminPricing();
  const save = useSavePricing();
  const [form] = Form.useForm<{ rows: PriceFormRow[] }>();
  const [importing, setImporting] = useState(false);
  const [exporting, setExporting] = useState(false);

  const onExport = async () => {
    setExporting(true);
    try {
      await downloadFile('/api/admin/pricing/export', {}, 'tollgate-prices.json');
    } catch (err) {
      message.error((err as Error).message);
    } finally {
      setExporting(false);
    }
  };

  useEffect(() => {
    if (pricing.data) form.setFieldsValue({ rows: toFormRows(pricing.data) });
  }, [pricing.data, form]);

  const onFinish = ({ rows }: { rows: PriceFormRow[] }) =>
    save.mutate(cleanPriceRows(rows ?? []), {
      onSuccess: () => message.success(t('common.saved')),
      onError: (err) => message.error(err.message),
    });

  const uniqueModel = {
    validator: (_: unknown, value: string) => {
      const rows: PriceFormRow[] = form.getFieldValue('rows') ?? [];
      const count = rows.filter((r) => r?.model?.trim() === value?.trim()).length;
      return count > 1 ? Promise.reject(new Error(t('modelPricing.duplicate'))) : Promise.resolve();
    },
  };

  return (
    <>
      <PageHeader
        title={t('modelPricing.title')}
        extra={
          <>
            <Button icon={<ImportOutlined />} onClick={() => setImporting(true)} data-testid="price-import">
              {t('priceImport.button')}
            </Button>
            <Button icon={<DownloadOutlined />} onClick={() => void onExport()} loading={exporting} data-testid="price-export">
              {t('priceImport.export')}
            </Button>
            <Button icon={<UndoOutlined />} onClick={() => form.setFieldsValue({ rows: toFormRows(pricing.data ?? []) })}>
              {t('common.reset')}
            </Button>
            <Button type="primary" icon={<SaveOutlined />} loading={save.isPending} onClick={() => form.submit()}>
              {t('modelPricing.saveAll')}
            </Button>
          </>
        }
      />
      <Typography.Paragraph type="secondary">{t('modelPricing.hint')}</Typography.Paragraph>
      <Typography.Paragraph type="secondary">{t('pricingUnits.hint')}</Typography.Paragraph>
      {pricing.error ? <QueryError error={pricing.error} onRetry={() => void pricing.refetch()} /> : null}
      <Form form={form} onFinish={onFinish} name="pricing-form" component="div">
        <Form.List name="rows">
          {(fields, { add, remove }) => (
            <>
              <Table
                rowKey="key"
                size="small"
                loading={pricing.isPending}
                dataSource={fields}
                pagination={false}
                expandable={{ expandedRowRender: (field) => <PriceExtras row={field.name} /> }}
                scroll={{ x: 'max-content' }}
                locale={{ emptyText: pricing.error ? t('common.loadFailed') : t('modelPricing.empty') }}
                columns={[
                  {
                    title: t('pricing.model'),
                    key: 'model',
                    render: (_, field) => (
                      <Form.Item
                        name={[field.name, 'model']}
                        style={{ margin: 0, minWidth: 200 }}
                        rules={[{ required: true, whitespace: true, message: t('validation.required') }, uniqueModel]}
                      >
                        <Input aria-label={t('modelPricing.cellLabel', { field: t('pricing.model'), row: field.name + 1 })} />
                      </Form.Item>
                    ),
                  },
                  ...[...TOKEN_FIELDS, ...UNIT_FIELDS].map((price) => ({
                    title: (UNIT_FIELDS as readonly string[]).includes(price) ? t(`pricingUnits.${price}`) : t(`modelPricing.${price}`),
                    key: price,
                    render: (_: unknown, field: { name: number }) => (
                      <Form.Item name={[field.name, price]} style={{ margin: 0, width: 110 }} rules={decimalRules(t)}>
                        <Input
                          inputMode="decimal"
                          aria-label={t('modelPricing.cellLabel', { field: t(`modelPricing.${price}`), row: field.name + 1 })}
                        />
                      </Form.Item>
                    ),
                  })),
                  {
                    title: t('common.actions'),
                    key: 'actions',
                    render: (_, field) => (
                      <Button type="text" danger aria-label={t('common.remove')} icon={<DeleteOutlined />} onClick={() => remove(field.name)} />
                    ),
                  },
                ]}
              />
              <Button type="dashed" block icon={<PlusOutlined />} style={{ marginTop: 12 }} onClick={() => add({ ...EMPTY_ROW })}>
                {t('modelPricing.addRow')}
              </Button>
            </>
          )}
        </Form.List>
      </Form>
      <PricingImportModal open={importing} onClose={() => setImporting(false)} />
    </>
  );
}
