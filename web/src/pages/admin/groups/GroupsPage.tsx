import { DeleteOutlined, EditOutlined, PlusOutlined } from '@ant-design/icons';
import { App, Button, Form, Input, Modal, Popconfirm, Space, Switch, Table, Tag, Tooltip, type TableProps } from 'antd';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useCreateGroup, useDeleteGroup, useGroups, useUpdateGroup } from '../../../api/groups';
import type { Group } from '../../../api/types';
import { PageHeader } from '../../../components/PageHeader';
import { QueryError } from '../../../components/QueryError';
import { applyServerError, decimalRules } from '../../../lib/validation';

const NEW_GROUP: Group = { name: '', description: '', ratio: '1', selectable: false };

export default function GroupsPage() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const groups = useGroups();
  const create = useCreateGroup();
  const update = useUpdateGroup();
  const remove = useDeleteGroup();
  const [editing, setEditing] = useState<{ group: Group; isNew: boolean } | null>(null);
  const [form] = Form.useForm<Group>();

  useEffect(() => {
    if (editing) form.setFieldsValue(editing.group);
  }, [editing, form]);

  const onFinish = async (values: Group) => {
    const group = { ...values, name: values.name.trim(), ratio: String(values.ratio).trim() };
    try {
      if (editing?.isNew) await create.mutateAsync(group);
      else await update.mutateAsync(group);
      message.success(t('common.saved'));
      setEditing(null);
    } catch (err) {
      const text = applyServerError(form, err);
      if (text) message.error(text);
    }
  };

  const columns: TableProps<Group>['columns'] = [
    { title: t('groups.name'), dataIndex: 'name', key: 'name' },
    { title: t('groups.description'), dataIndex: 'description', key: 'description', ellipsis: true },
    { title: t('groups.ratio'), dataIndex: 'ratio', key: 'ratio', render: (v: string) => `×${v}` },
    {
      title: t('groups.selectable'),
      dataIndex: 'selectable',
      key: 'selectable',
      render: (v: boolean) => <Tag color={v ? 'success' : 'default'}>{v ? t('common.yes') : t('common.no')}</Tag>,
    },
    {
      title: t('common.actions'),
      key: 'actions',
      render: (_, g) => (
        <Space size={0}>
          <Tooltip title={t('common.edit')}>
            <Button type="text" aria-label={t('common.edit')} icon={<EditOutlined />} onClick={() => setEditing({ group: g, isNew: false })} />
          </Tooltip>
          <Popconfirm
            title={t('groups.deleteConfirm', { name: g.name })}
            okText={t('common.delete')}
            cancelText={t('common.cancel')}
            okButtonProps={{ danger: true }}
            onConfirm={() => remove.mutate(g.name, { onError: (err) => message.error(err.message) })}
          >
            <Button type="text" danger aria-label={t('common.delete')} icon={<DeleteOutlined />} disabled={g.name === 'default'} />
          </Popconfirm>
        </Space>
      ),
    },
  ];

  return (
    <>
      <PageHeader
        title={t('groups.title')}
        extra={
          <Button type="primary" icon={<PlusOutlined />} onClick={() => setEditing({ group: NEW_GROUP, isNew: true })}>
            {t('groups.create')}
          </Button>
        }
      />
      {groups.error ? <QueryError error={groups.error} onRetry={() => void groups.refetch()} /> : null}
      <Table<Group>
        rowKey="name"
        columns={columns}
        dataSource={groups.data ?? []}
        loading={groups.isPending}
        scroll={{ x: 'max-content' }}
        pagination={false}
        locale={{ emptyText: groups.error ? t('common.loadFailed') : t('groups.empty') }}
      />
      <Modal
        open={!!editing}
        title={editing?.isNew ? t('groups.createTitle') : t('groups.editTitle', { name: editing?.group.name ?? '' })}
        onCancel={() => setEditing(null)}
        onOk={() => form.submit()}
        okText={t('common.save')}
        cancelText={t('common.cancel')}
        confirmLoading={create.isPending || update.isPending}
        destroyOnHidden
      >
        <Form<Group> form={form} layout="vertical" onFinish={onFinish} name="group-form" preserve={false}>
          <Form.Item
            name="name"
            label={t('groups.name')}
            rules={[
              { required: true, whitespace: true, message: t('validation.required') },
              { pattern: /^[A-Za-z0-9_.-]{1,32}$/, message: t('validation.slug') },
            ]}
          >
            <Input disabled={!editing?.isNew} />
          </Form.Item>
          <Form.Item name="description" label={t('groups.description')}>
            <Input />
          </Form.Item>
          <Form.Item name="ratio" label={t('groups.ratio')} rules={decimalRules(t, true)} extra={t('groups.ratioHint')}>
            <Input inputMode="decimal" />
          </Form.Item>
          <Form.Item name="selectable" label={t('groups.selectable')} valuePropName="checked" extra={t('groups.selectableHint')}>
            <Switch />
          </Form.Item>
        </Form>
      </Modal>
    </>
  );
}
