import { App, Button, Checkbox, Col, Divider, Drawer, Flex, Form, Input, InputNumber, Row, Select, Switch, Typography } from 'antd';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useChannelOptions } from '../../../api/channels';
import { useCreateLogicalGroup, useLogicalGroupDefaults, useUpdateLogicalGroup } from '../../../api/logicalGroups';
import { usePricing } from '../../../api/pricing';
import { useTiers } from '../../../api/tiers';
import { STICKY_LEVELS, type LogicalGroup } from '../../../api/types';
import { WIDE_DRAWER } from '../../../components/drawerSize';
import { ApiError } from '../../../api/client';
import { applyServerError, decimalRules } from '../../../lib/validation';
import {
  FAILOVER_FIELDS,
  formToGroup,
  groupErrorPath,
  groupToForm,
  NEW_GROUP_VALUES,
  validUserIds,
  type LogicalGroupFormValues,
} from './groupForm';
import { RouteList } from './RouteList';

interface LogicalGroupDrawerProps {
  open: boolean;
  /** The group to edit; null creates one. */
  group: LogicalGroup | null;
  onClose: () => void;
}

/** Create or edit a logical group: basics, models, access, sticky and failover policies, return to primary, routes. */
export function LogicalGroupDrawer({ open, group, onClose }: LogicalGroupDrawerProps) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const [form] = Form.useForm<LogicalGroupFormValues>();
  const accessAll = Form.useWatch('access_all', form);
  const levels = Form.useWatch('sticky_levels', form) ?? [];
  const defaults = useLogicalGroupDefaults(open);
  const channels = useChannelOptions(open);
  const tiers = useTiers(open);
  const pricing = usePricing(open);
  const create = useCreateLogicalGroup();
  const update = useUpdateLogicalGroup();

  useEffect(() => {
    if (!open) return;
    form.resetFields();
    form.setFieldsValue(group ? groupToForm(group) : NEW_GROUP_VALUES);
  }, [open, group, form]);

  const onFinish = async (values: LogicalGroupFormValues) => {
    const body = formToGroup(values);
    try {
      if (group) {
        const patch: Partial<typeof body> = { ...body };
        delete patch.name;
        await update.mutateAsync({ name: group.name, body: patch });
      } else {
        await create.mutateAsync(body);
      }
      message.success(t('common.saved'));
      onClose();
    } catch (err) {
      const path = err instanceof ApiError ? groupErrorPath(err.field) : null;
      if (path && err instanceof Error) {
        // The path comes from the server's field name, so the form's typed paths cannot describe it.
        const name = path as unknown as Parameters<typeof form.scrollToField>[0];
        form.setFields([{ name, errors: [err.message] }]);
        form.scrollToField(name);
        return;
      }
      const text = applyServerError(form, err);
      if (text) message.error(text);
    }
  };

  const d = defaults.data;
  const defaultText = (value: number | undefined) =>
    value === undefined ? undefined : t('logicalGroups.defaultValue', { value });
  const defaultLevels = d?.sticky?.levels?.length
    ? d.sticky.levels.map((level) => t(`logicalGroups.level_${level}`)).join(', ')
    : t('logicalGroups.noLevels');
  const channelOptions = (channels.data ?? []).map((c) => ({ value: c.id, label: `#${c.id} ${c.name}` }));
  const modelOptions = [...new Set((pricing.data ?? []).map((p) => p.model))].map((m) => ({ value: m, label: m }));

  return (
    <Drawer
      open={open}
      onClose={onClose}
      title={group ? t('logicalGroups.editTitle', { name: group.name }) : t('logicalGroups.createTitle')}
      size={WIDE_DRAWER}
      destroyOnHidden
      extra={
        <Flex gap={8}>
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button type="primary" onClick={() => form.submit()} loading={create.isPending || update.isPending} data-testid="group-submit">
            {group ? t('common.save') : t('common.create')}
          </Button>
        </Flex>
      }
    >
      <Form<LogicalGroupFormValues> form={form} layout="vertical" onFinish={onFinish} initialValues={NEW_GROUP_VALUES} name="lgroup-form">
        <Row gutter={16}>
          <Col xs={24} md={12}>
            <Form.Item
              name="name"
              label={t('logicalGroups.name')}
              rules={[
                { required: true, whitespace: true, message: t('validation.required') },
                { pattern: /^[A-Za-z0-9_.-]{1,32}$/, message: t('validation.slug') },
              ]}
            >
              <Input disabled={!!group} />
            </Form.Item>
          </Col>
          <Col xs={24} md={12}>
            <Form.Item name="display_name" label={t('logicalGroups.displayName')} rules={[{ max: 128, message: t('validation.tooLong', { max: 128 }) }]}>
              <Input />
            </Form.Item>
          </Col>
        </Row>
        <Form.Item name="description" label={t('logicalGroups.description')}>
          <Input.TextArea autoSize={{ minRows: 1, maxRows: 4 }} />
        </Form.Item>
        <Row gutter={16}>
          <Col xs={24} md={8}>
            <Form.Item name="ratio" label={t('logicalGroups.ratio')} rules={decimalRules(t, true)} extra={t('logicalGroups.ratioHint')}>
              <Input inputMode="decimal" />
            </Form.Item>
          </Col>
          <Col xs={12} md={8}>
            <Form.Item name="enabled" label={t('common.enabled')} valuePropName="checked">
              <Switch />
            </Form.Item>
          </Col>
        </Row>
        <Form.Item name="models" label={t('logicalGroups.models')} extra={t('logicalGroups.modelsHint')}>
          <Select mode="tags" tokenSeparators={[',', ' ', '\n']} options={modelOptions} data-testid="group-models" />
        </Form.Item>

        <Divider titlePlacement="start">{t('logicalGroups.access')}</Divider>
        <Form.Item name="access_all" label={t('logicalGroups.accessAll')} valuePropName="checked" extra={t('logicalGroups.accessAllHint')}>
          <Switch />
        </Form.Item>
        {accessAll === false ? (
          <Row gutter={16}>
            <Col xs={24} md={12}>
              <Form.Item name="access_tiers" label={t('logicalGroups.accessTiers')}>
                <Select
                  mode="multiple"
                  loading={tiers.isPending}
                  options={(tiers.data ?? []).map((tier) => ({ value: tier.name, label: `${tier.name} ×${tier.ratio}` }))}
                />
              </Form.Item>
            </Col>
            <Col xs={24} md={12}>
              <Form.Item
                name="access_users"
                label={t('logicalGroups.accessUsers')}
                extra={t('logicalGroups.accessUsersHint')}
                rules={[
                  {
                    validator: (_, ids: string[] | undefined) =>
                      validUserIds(ids) ? Promise.resolve() : Promise.reject(new Error(t('logicalGroups.badUserId'))),
                  },
                ]}
              >
                <Select mode="tags" open={false} suffixIcon={null} tokenSeparators={[',', ' ']} />
              </Form.Item>
            </Col>
          </Row>
        ) : null}

        <Divider titlePlacement="start">{t('logicalGroups.sticky')}</Divider>
        <Form.Item
          name="sticky_levels"
          label={t('logicalGroups.stickyLevels')}
          extra={t('logicalGroups.stickyLevelsHint', { levels: defaultLevels })}
        >
          <Checkbox.Group options={STICKY_LEVELS.map((level) => ({ value: level, label: t(`logicalGroups.level_${level}`) }))} />
        </Form.Item>
        <Row gutter={16}>
          {STICKY_LEVELS.map((level) => (
            <Col xs={12} md={6} key={level}>
              <Form.Item
                name={['sticky_ttl', level]}
                label={t('logicalGroups.ttlFor', { level: t(`logicalGroups.level_${level}`) })}
                extra={defaultText(d?.sticky?.ttl_s?.[level])}
              >
                <InputNumber
                  min={1}
                  precision={0}
                  style={{ width: '100%' }}
                  disabled={levels.length > 0 && !levels.includes(level)}
                  placeholder={d?.sticky?.ttl_s?.[level] !== undefined ? String(d.sticky.ttl_s[level]) : undefined}
                  suffix={t('logicalGroups.secondsShort')}
                />
              </Form.Item>
            </Col>
          ))}
        </Row>

        <Divider titlePlacement="start">{t('logicalGroups.failover')}</Divider>
        <Typography.Paragraph type="secondary">{t('logicalGroups.failoverHint')}</Typography.Paragraph>
        <Row gutter={16}>
          {FAILOVER_FIELDS.map((field) => (
            <Col xs={12} md={6} key={field}>
              <Form.Item name={['failover', field]} label={t(`logicalGroups.failover_${field}`)} extra={defaultText(d?.failover?.[field])}>
                <InputNumber
                  min={0}
                  precision={0}
                  style={{ width: '100%' }}
                  placeholder={d?.failover?.[field] !== undefined ? String(d.failover[field]) : undefined}
                />
              </Form.Item>
            </Col>
          ))}
        </Row>
        <Form.Item
          name="return_to_primary_s"
          label={t('logicalGroups.returnToPrimary')}
          extra={
            d?.return_to_primary_s
              ? `${t('logicalGroups.returnToPrimaryHint')} · ${t('logicalGroups.defaultValue', { value: d.return_to_primary_s })}`
              : t('logicalGroups.returnToPrimaryHint')
          }
        >
          <InputNumber min={0} precision={0} style={{ width: 200 }} suffix={t('logicalGroups.secondsShort')} />
        </Form.Item>

        <Divider titlePlacement="start">{t('logicalGroups.routes')}</Divider>
        <RouteList channelOptions={channelOptions} channelsLoading={channels.isPending} />
      </Form>
    </Drawer>
  );
}
