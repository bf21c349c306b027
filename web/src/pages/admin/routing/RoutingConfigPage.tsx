import { DeleteOutlined, EditOutlined, PlusOutlined } from '@ant-design/icons';
import { App, Button, Col, Form, Input, InputNumber, Modal, Popconfirm, Row, Select, Space, Table, Tooltip, Typography, type TableProps } from 'antd';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { STRATEGIES, useDeleteRoutingModel, usePutRoutingModel, useRoutingModels, type RouteTuning, type RoutingConfigRow } from '../../../api/routing';
import { PageHeader } from '../../../components/PageHeader';
import { QueryError } from '../../../components/QueryError';
import { applyServerError } from '../../../lib/validation';

type TuningValues = Omit<RouteTuning, 'weights'> & { group: string; model: string; latency?: number; success?: number; cost?: number };

/** Numeric tuning fields: name, label key, bounds and step. */
const NUMBERS: { name: keyof RouteTuning; label: string; max: number; step?: number; int?: boolean }[] = [
  { name: 'min_samples', label: 'routing.minSamples', max: 100000, int: true },
  { name: 'failure_threshold', label: 'routing.failureThreshold', max: 1, step: 0.05 },
  { name: 'recovery_s', label: 'routing.recoveryS', max: 100000, int: true },
  { name: 'max_attempts', label: 'routing.maxAttempts', max: 10, int: true },
  { name: 'top_k', label: 'routing.topK', max: 100, int: true },
  { name: 'min_share', label: 'routing.minShare', max: 1, step: 0.01 },
  { name: 'temperature', label: 'routing.temperature', max: 10, step: 0.01 },
  { name: 'explore', label: 'routing.explore', max: 1, step: 0.01 },
  { name: 'latency_ref_ms', label: 'routing.latencyRef', max: 3600000 },
  { name: 'cost_ref', label: 'routing.costRef', max: 1000000 },
  { name: 'live_weight', label: 'routing.liveWeight', max: 1, step: 0.05 },
];

function toBody(v: TuningValues): RouteTuning {
  const body: RouteTuning = { weights: { latency: v.latency ?? 0, success: v.success ?? 0, cost: v.cost ?? 0 } };
  if (v.strategy) body.strategy = v.strategy;
  for (const n of NUMBERS) {
    const x = v[n.name as keyof TuningValues];
    if (typeof x === 'number' && x > 0) (body as unknown as Record<string, number>)[n.name] = x;
  }
  return body;
}

/** Per logical group × model routing configuration (strategy, weights, thresholds). */
export default function RoutingConfigPage() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const models = useRoutingModels();
  const put = usePutRoutingModel();
  const remove = useDeleteRoutingModel();
  const [editing, setEditing] = useState<{ row: RoutingConfigRow | null } | null>(null);
  const [form] = Form.useForm<TuningValues>();

  useEffect(() => {
    if (!editing) return;
    const r = editing.row;
    form.setFieldsValue(
      r ? { ...r.tuning, group: r.group, model: r.model, ...r.tuning.weights } : { group: '*', model: '*' },
    );
  }, [editing, form]);

  const onFinish = async (v: TuningValues) => {
    try {
      await put.mutateAsync({ group: v.group.trim(), model: v.model.trim(), body: toBody(v) });
      message.success(t('common.saved'));
      setEditing(null);
    } catch (err) {
      const text = applyServerError(form, err);
      if (text) message.error(text);
    }
  };

  const strategyName = (s?: string) => (s ? t(`routing.strategy_${s}`, { defaultValue: s }) : t('common.none'));
  const columns: TableProps<RoutingConfigRow>['columns'] = [
    { title: t('routing.group'), dataIndex: 'group', render: (v: string) => <span className="tg-mono">{v}</span> },
    { title: t('routing.model'), dataIndex: 'model', render: (v: string) => <span className="tg-mono">{v}</span> },
    { title: t('routing.strategy'), key: 'strategy', render: (_, r) => strategyName(r.effective.strategy) },
    {
      title: t('routing.weights'),
      key: 'weights',
      render: (_, r) => `${r.effective.weights.latency} / ${r.effective.weights.success} / ${r.effective.weights.cost}`,
    },
    { title: t('routing.minSamples'), key: 'min', render: (_, r) => r.effective.min_samples },
    { title: t('routing.maxAttempts'), key: 'att', render: (_, r) => r.effective.max_attempts || t('common.none') },
    {
      title: t('common.actions'),
      key: 'actions',
      render: (_, row) => (
        <Space size={0}>
          <Tooltip title={t('common.edit')}>
            <Button type="text" aria-label={t('common.edit')} icon={<EditOutlined />} onClick={() => setEditing({ row })} />
          </Tooltip>
          <Popconfirm
            title={t('routing.deleteConfirm', { group: row.group, model: row.model })}
            okText={t('common.delete')}
            cancelText={t('common.cancel')}
            okButtonProps={{ danger: true }}
            onConfirm={() => remove.mutate({ group: row.group, model: row.model }, { onError: (err) => message.error(err.message) })}
          >
            <Button type="text" danger aria-label={t('common.delete')} icon={<DeleteOutlined />} />
          </Popconfirm>
        </Space>
      ),
    },
  ];

  return (
    <>
      <PageHeader
        title={t('routing.configTitle')}
        extra={
          <Button type="primary" icon={<PlusOutlined />} onClick={() => setEditing({ row: null })} data-testid="add-routing-row">
            {t('routing.addRow')}
          </Button>
        }
      />
      <Typography.Paragraph type="secondary">{t('routing.configIntro')}</Typography.Paragraph>
      {models.error ? <QueryError error={models.error} onRetry={() => void models.refetch()} /> : null}
      <Table<RoutingConfigRow>
        rowKey={(r) => `${r.group}/${r.model}`}
        columns={columns}
        dataSource={models.data?.items ?? []}
        loading={models.isPending}
        scroll={{ x: 'max-content' }}
        pagination={false}
        locale={{ emptyText: models.error ? t('common.loadFailed') : t('routing.empty') }}
      />
      <Modal
        open={!!editing}
        title={editing?.row ? t('routing.editTitle', { group: editing.row.group, model: editing.row.model }) : t('routing.createTitle')}
        onCancel={() => setEditing(null)}
        onOk={() => form.submit()}
        okText={t('common.save')}
        cancelText={t('common.cancel')}
        okButtonProps={{ 'data-testid': 'routing-submit' } as Record<string, string>}
        confirmLoading={put.isPending}
        width={720}
        destroyOnHidden
      >
        <Form<TuningValues> form={form} layout="vertical" onFinish={onFinish} name="routing-form" preserve={false}>
          <Row gutter={12}>
            <Col span={12}>
              <Form.Item name="group" label={t('routing.group')} rules={[{ required: true, whitespace: true, message: t('validation.required') }]}>
                <Input disabled={!!editing?.row} />
              </Form.Item>
            </Col>
            <Col span={12}>
              <Form.Item name="model" label={t('routing.model')} rules={[{ required: true, whitespace: true, message: t('validation.required') }]}>
                <Input disabled={!!editing?.row} />
              </Form.Item>
            </Col>
          </Row>
          <Form.Item name="strategy" label={t('routing.strategy')}>
            <Select allowClear placeholder={t('routing.strategyDefault')} options={STRATEGIES.map((s) => ({ value: s, label: strategyName(s) }))} />
          </Form.Item>
          <Typography.Text strong>{t('routing.weights')}</Typography.Text>
          <Row gutter={12}>
            {(['latency', 'success', 'cost'] as const).map((w) => (
              <Col span={8} key={w}>
                <Form.Item name={w} label={t(`routing.weight${w[0].toUpperCase()}${w.slice(1)}`)}>
                  <InputNumber min={0} max={1} step={0.05} style={{ width: '100%' }} />
                </Form.Item>
              </Col>
            ))}
          </Row>
          <Row gutter={12}>
            {NUMBERS.map((n) => (
              <Col span={8} key={n.name}>
                <Form.Item name={n.name} label={t(n.label)}>
                  <InputNumber min={0} max={n.max} step={n.step} precision={n.int ? 0 : undefined} style={{ width: '100%' }} />
                </Form.Item>
              </Col>
            ))}
          </Row>
        </Form>
      </Modal>
    </>
  );
}
