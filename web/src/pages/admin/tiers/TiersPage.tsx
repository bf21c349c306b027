import { DeleteOutlined, EditOutlined, PlusOutlined } from '@ant-design/icons';
import { App, Button, Form, Input, Modal, Popconfirm, Space, Table, Tooltip, type TableProps } from 'antd';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useCreateTier, useDeleteTier, useTiers, useUpdateTier } from '../../../api/tiers';
import type { Tier } from '../../../api/types';
import { PageHeader } from '../../../components/PageHeader';
import { QueryError } from '../../../components/QueryError';
import { useFormat } from '../../../lib/useFormat';
import { applyServerError, decimalRules } from '../../../lib/validation';

interface TierFormValues {
  name: string;
  ratio: string;
  description?: string;
}

const NEW_TIER: TierFormValues = { name: '', ratio: '1', description: '' };

/** Price tiers: a user's tier ratio multiplies the group's ratio on every price. */
export default function TiersPage() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { message } = App.useApp();
  const tiers = useTiers();
  const create = useCreateTier();
  const update = useUpdateTier();
  const remove = useDeleteTier();
  const [editing, setEditing] = useState<{ tier: Tier | null } | null>(null);
  const [form] = Form.useForm<TierFormValues>();

  useEffect(() => {
    if (!editing) return;
    const tier = editing.tier;
    form.setFieldsValue(tier ? { name: tier.name, ratio: tier.ratio, description: tier.description } : NEW_TIER);
  }, [editing, form]);

  const onFinish = async (values: TierFormValues) => {
    const ratio = String(values.ratio).trim();
    const description = values.description?.trim() ?? '';
    try {
      if (editing?.tier) await update.mutateAsync({ name: editing.tier.name, body: { ratio, description } });
      else await create.mutateAsync({ name: values.name.trim(), ratio, description });
      message.success(t('common.saved'));
      setEditing(null);
    } catch (err) {
      const text = applyServerError(form, err);
      if (text) message.error(text);
    }
  };

  const columns: TableProps<Tier>['columns'] = [
    { title: t('tiers.name'), dataIndex: 'name', key: 'name', render: (v: string) => <span className="tg-mono">{v}</span> },
    { title: t('tiers.description'), dataIndex: 'description', key: 'description', ellipsis: true, render: (v: string) => v || t('common.none') },
    { title: t('tiers.ratio'), dataIndex: 'ratio', key: 'ratio', render: (v: string) => `×${v}` },
    { title: t('tiers.users'), dataIndex: 'users', key: 'users', render: (v: number) => fmt.number(v ?? 0) },
    {
      title: t('common.actions'),
      key: 'actions',
      render: (_, tier) => (
        <Space size={0}>
          <Tooltip title={t('common.edit')}>
            <Button type="text" aria-label={t('common.edit')} icon={<EditOutlined />} onClick={() => setEditing({ tier })} />
          </Tooltip>
          <Popconfirm
            title={t('tiers.deleteConfirm', { name: tier.name })}
            okText={t('common.delete')}
            cancelText={t('common.cancel')}
            okButtonProps={{ danger: true }}
            onConfirm={() => remove.mutate(tier.name, { onError: (err) => message.error(err.message) })}
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
        title={t('tiers.title')}
        extra={
          <Button type="primary" icon={<PlusOutlined />} onClick={() => setEditing({ tier: null })} data-testid="create-tier">
            {t('tiers.create')}
          </Button>
        }
      />
      {tiers.error ? <QueryError error={tiers.error} onRetry={() => void tiers.refetch()} /> : null}
      <Table<Tier>
        rowKey="name"
        columns={columns}
        dataSource={tiers.data ?? []}
        loading={tiers.isPending}
        scroll={{ x: 'max-content' }}
        pagination={false}
        locale={{ emptyText: tiers.error ? t('common.loadFailed') : t('tiers.empty') }}
      />
      <Modal
        open={!!editing}
        title={editing?.tier ? t('tiers.editTitle', { name: editing.tier.name }) : t('tiers.createTitle')}
        onCancel={() => setEditing(null)}
        onOk={() => form.submit()}
        okText={t('common.save')}
        cancelText={t('common.cancel')}
        okButtonProps={{ 'data-testid': 'tier-submit' } as Record<string, string>}
        confirmLoading={create.isPending || update.isPending}
        destroyOnHidden
      >
        <Form<TierFormValues> form={form} layout="vertical" onFinish={onFinish} name="tier-form" preserve={false}>
          <Form.Item
            name="name"
            label={t('tiers.name')}
            rules={[
              { required: true, whitespace: true, message: t('validation.required') },
              { pattern: /^[A-Za-z0-9_.-]{1,32}$/, message: t('validation.slug') },
            ]}
          >
            <Input disabled={!!editing?.tier} />
          </Form.Item>
          <Form.Item name="ratio" label={t('tiers.ratio')} rules={decimalRules(t, true)} extra={t('tiers.ratioHint')}>
            <Input inputMode="decimal" />
          </Form.Item>
          <Form.Item name="description" label={t('tiers.description')}>
            <Input />
          </Form.Item>
        </Form>
      </Modal>
    </>
  );
}
