import { InboxOutlined } from '@ant-design/icons';
import { Alert, App, Descriptions, Modal, Radio, Space, Table, Typography, Upload } from 'antd';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useImportPricing, type ImportMode } from '../../../api/pricing';
import type { PricingImportResult } from '../../../api/types';
import { useFormat } from '../../../lib/useFormat';

/** Reads a picked file as JSON; null with the reason when it is not JSON. */
export async function readJsonFile(file: Blob): Promise<{ value: unknown } | { error: string }> {
  try {
    return { value: JSON.parse(await file.text()) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/**
 * Import a price file (new-api's ratio format or ours): pick the file and a mode, see what a dry run would do
 * (models added and changed, the resulting table), then confirm to save.
 */
export function PricingImportModal({ open, onClose }: { open: boolean; onClose: () => void }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { message } = App.useApp();
  const run = useImportPricing();
  const [file, setFile] = useState<{ name: string; value: unknown } | null>(null);
  const [mode, setMode] = useState<ImportMode>('merge');
  const [preview, setPreview] = useState<PricingImportResult | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (!open) return;
    setFile(null);
    setPreview(null);
    setError(null);
    setMode('merge');
  }, [open]);

  const dryRun = (value: unknown, m: ImportMode) => {
    setPreview(null);
    setError(null);
    run.mutate(
      { file: value, mode: m, dryRun: true },
      { onSuccess: (res) => setPreview(res), onError: (err) => setError(err.message) },
    );
  };

  const onPick = async (picked: File) => {
    const parsed = await readJsonFile(picked);
    if ('error' in parsed) {
      setFile(null);
      setPreview(null);
      setError(t('priceImport.notJson', { error: parsed.error }));
      return;
    }
    setFile({ name: picked.name, value: parsed.value });
    dryRun(parsed.value, mode);
  };

  const onConfirm = () => {
    if (!file || !preview) return;
    run.mutate(
      { file: file.value, mode, dryRun: false },
      {
        onSuccess: (res) => {
          message.success(t('priceImport.done', { added: res.added, changed: res.changed, rows: res.rows }));
          onClose();
        },
        onError: (err) => setError(err.message),
      },
    );
  };

  return (
    <Modal
      open={open}
      onCancel={onClose}
      title={t('priceImport.title')}
      okText={t('priceImport.confirm')}
      cancelText={t('common.cancel')}
      onOk={onConfirm}
      okButtonProps={{ disabled: !preview, loading: run.isPending && !!preview, ...({ 'data-testid': 'price-import-confirm' } as Record<string, string>) }}
      width={760}
      destroyOnHidden
    >
      <Space orientation="vertical" style={{ width: '100%' }} size={12}>
        <Typography.Paragraph type="secondary" style={{ marginBottom: 0 }}>
          {t('priceImport.hint')}
        </Typography.Paragraph>
        <Radio.Group
          value={mode}
          optionType="button"
          onChange={(e) => {
            setMode(e.target.value);
            if (file) dryRun(file.value, e.target.value);
          }}
          options={[
            { value: 'merge', label: t('priceImport.mode_merge') },
            { value: 'replace', label: t('priceImport.mode_replace') },
          ]}
          data-testid="price-import-mode"
        />
        <Typography.Text type="secondary">{t(`priceImport.modeHint_${mode}`)}</Typography.Text>
        <Upload.Dragger
          accept=".json,application/json"
          multiple={false}
          showUploadList={false}
          beforeUpload={(picked) => {
            void onPick(picked);
            return false;
          }}
          data-testid="price-import-file"
        >
          <p className="ant-upload-drag-icon">
            <InboxOutlined />
          </p>
          <p className="ant-upload-text">{file ? file.name : t('priceImport.pick')}</p>
        </Upload.Dragger>
        {error ? <Alert type="error" showIcon title={error} data-testid="price-import-error" /> : null}
        {preview ? (
          <>
            <Descriptions size="small" bordered column={{ xs: 1, md: 3 }} data-testid="price-import-preview">
              <Descriptions.Item label={t('priceImport.format')}>{t(`priceImport.format_${preview.format}`, { defaultValue: preview.format })}</Descriptions.Item>
              <Descriptions.Item label={t('priceImport.imported')}>{fmt.number(preview.imported)}</Descriptions.Item>
              <Descriptions.Item label={t('priceImport.rowsAfter')}>{fmt.number(preview.rows)}</Descriptions.Item>
              <Descriptions.Item label={t('priceImport.added')}>
                <span data-testid="price-import-added">{fmt.number(preview.added)}</span>
              </Descriptions.Item>
              <Descriptions.Item label={t('priceImport.changed')}>
                <span data-testid="price-import-changed">{fmt.number(preview.changed)}</span>
              </Descriptions.Item>
            </Descriptions>
            {preview.prices?.length ? (
              <Table
                size="small"
                rowKey="model"
                dataSource={preview.prices}
                pagination={{ pageSize: 8, hideOnSinglePage: true, size: 'small' }}
                scroll={{ x: 'max-content' }}
                columns={[
                  { title: t('pricing.model'), dataIndex: 'model', key: 'model' },
                  { title: t('pricing.input'), dataIndex: 'input', key: 'input', render: (v: string) => fmt.price(v) },
                  { title: t('pricing.output'), dataIndex: 'output', key: 'output', render: (v: string) => fmt.price(v) },
                  { title: t('pricing.cacheRead'), dataIndex: 'cache_read', key: 'cache_read', render: (v: string) => fmt.price(v) },
                  { title: t('pricing.cacheWrite'), dataIndex: 'cache_write', key: 'cache_write', render: (v: string) => fmt.price(v) },
                  { title: t('pricing.perCall'), dataIndex: 'per_call', key: 'per_call', render: (v: string) => fmt.price(v) },
                ]}
              />
            ) : null}
          </>
        ) : null}
      </Space>
    </Modal>
  );
}
