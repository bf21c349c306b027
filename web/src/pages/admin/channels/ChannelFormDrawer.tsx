import { CloudDownloadOutlined } from '@ant-design/icons';
import { App, Button, Col, Divider, Drawer, Flex, Form, Input, InputNumber, Row, Select, Switch, Typography } from 'antd';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useCreateChannel, useFetchUpstreamModels, useUpdateChannel } from '../../../api/channels';
import { useGroups } from '../../../api/groups';
import type { Channel } from '../../../api/types';
import { KeyValueEditor } from '../../../components/KeyValueEditor';
import { applyServerError } from '../../../lib/validation';
import { baseUrlOptional, CHANNEL_TYPES, channelToForm, DEFAULT_CHANNEL_VALUES, formToChannel, parseKeys, type ChannelFormValues } from './channelForm';
import { CloudFields } from './CloudFields';
import { WIDE_DRAWER } from '../../../components/drawerSize';
import { StepUpCancelled, useStepUp } from '../../../components/StepUp';
import { CostFields } from './CostFields';

interface ChannelFormDrawerProps {
  open: boolean;
  channel: Channel | null;
  onClose: () => void;
}

const TIMEOUT_FIELDS = ['connect_ms', 'first_byte_ms', 'idle_ms', 'total_ms'] as const;

/** Create or edit a channel with every field, overrides as structured editors. */
export function ChannelFormDrawer({ open, channel, onClose }: ChannelFormDrawerProps) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const [form] = Form.useForm<ChannelFormValues>();
  const groups = useGroups(open);
  const create = useCreateChannel();
  const update = useUpdateChannel();
  const stepUp = useStepUp();
  const fetchModels = useFetchUpstreamModels();
  const [upstreamModels, setUpstreamModels] = useState<string[]>([]);
  const models = Form.useWatch('models', form) ?? [];
  const type = Form.useWatch('type', form) ?? DEFAULT_CHANNEL_VALUES.type;
  const preset = Form.useWatch(['config', 'preset'], form) as string | undefined;
  const urlOptional = baseUrlOptional(type, preset);
  const keysInForm = type === 'vertex' || type === 'bedrock'; // credentials have their own fields (CloudFields)

  useEffect(() => {
    if (!open) return;
    form.resetFields();
    form.setFieldsValue(channel ? channelToForm(channel) : DEFAULT_CHANNEL_VALUES);
    setUpstreamModels([]);
  }, [open, channel, form]);

  const onFinish = async (values: ChannelFormValues) => {
    try {
      // Changing keys asks an admin with 2FA for a fresh code (step-up), then retries.
      if (channel) {
        const body = formToChannel(values, channel);
        await stepUp.run((code) => update.mutateAsync({ id: channel.id, body, code }));
      } else {
        const body = formToChannel(values);
        await stepUp.run((code) => create.mutateAsync({ ...body, code }));
      }
      message.success(t('common.saved'));
      onClose();
    } catch (err) {
      if (err instanceof StepUpCancelled) return;
      const text = applyServerError(form, err);
      if (text) message.error(text);
    }
  };

  const onFetchModels = () => {
    if (!channel) return;
    fetchModels.mutate(channel.id, {
      onSuccess: (res) => {
        setUpstreamModels(res.models ?? []);
        message.success(t('channels.fetchedModels', { count: res.models?.length ?? 0 }));
      },
      onError: (err) => message.error(err.message),
    });
  };

  const required = { required: true, message: t('validation.required') };
  const modelOptions = [...new Set([...models, ...upstreamModels])].map((m) => ({ value: m, label: m }));

  return (
    <Drawer
      open={open}
      onClose={onClose}
      title={channel ? t('channels.editTitle', { name: channel.name }) : t('channels.createTitle')}
      size={WIDE_DRAWER}
      destroyOnHidden
      extra={
        <Flex gap={8}>
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button type="primary" onClick={() => form.submit()} loading={create.isPending || update.isPending} data-testid="channel-submit">
            {channel ? t('common.save') : t('common.create')}
          </Button>
        </Flex>
      }
    >
      <Form<ChannelFormValues> form={form} layout="vertical" onFinish={onFinish} initialValues={DEFAULT_CHANNEL_VALUES} name="channel-form">
        <Row gutter={16}>
          <Col xs={24} md={12}>
            <Form.Item name="name" label={t('channels.name')} rules={[{ ...required, whitespace: true }, { max: 64, message: t('validation.tooLong', { max: 64 }) }]}>
              <Input />
            </Form.Item>
          </Col>
          <Col xs={24} md={12}>
            <Form.Item name="type" label={t('channels.type')} rules={[required]}>
              <Select options={CHANNEL_TYPES.map((type) => ({ value: type, label: t(`channels.type_${type}`) }))} />
            </Form.Item>
          </Col>
        </Row>
        <CloudFields type={type} editing={!!channel} />
        <Form.Item
          name="base_url"
          label={t('channels.baseUrl')}
          extra={urlOptional ? t('channels.baseUrlDefaultHint') : t('channels.baseUrlHint')}
          rules={[...(urlOptional ? [] : [required]), { type: 'url', message: t('validation.url') }, { pattern: /^https?:\/\//, message: t('validation.url') }]}
        >
          <Input placeholder={urlOptional ? t('channels.baseUrlDefault') : t('channels.baseUrlPlaceholder')} data-testid="channel-base-url" />
        </Form.Item>
        {keysInForm ? null : (
          <Form.Item
            name="keys_text"
            label={t('channels.keys')}
            extra={channel ? t('channels.keysKeepHint', { count: channel.keys?.length ?? 0 }) : t('channels.keysHint')}
            rules={
              channel
                ? []
                : [{ validator: (_, v: string) => (parseKeys(v).length > 0 ? Promise.resolve() : Promise.reject(new Error(t('validation.required')))) }]
            }
          >
            <Input.TextArea autoSize={{ minRows: 2, maxRows: 8 }} className="tg-mono" placeholder={channel?.keys?.join('\n')} />
          </Form.Item>
        )}
        <Row gutter={16}>
          <Col xs={24} md={12}>
            <Form.Item name="key_strategy" label={t('channels.keyStrategy')}>
              <Select
                options={[
                  { value: 'random', label: t('channels.strategy_random') },
                  { value: 'round_robin', label: t('channels.strategy_round_robin') },
                ]}
              />
            </Form.Item>
          </Col>
          <Col xs={24} md={12}>
            <Form.Item name="enabled" label={t('channels.enabled')} valuePropName="checked">
              <Switch />
            </Form.Item>
          </Col>
        </Row>
        <Form.Item label={t('channels.models')} required extra={t('channels.modelsHint')}>
          <Flex gap={8} align="start">
            <Form.Item name="models" noStyle rules={[{ ...required, type: 'array', min: 1 }]}>
              <Select mode="tags" tokenSeparators={[',', ' ', '\n']} options={modelOptions} style={{ flex: 1 }} data-testid="channel-models" />
            </Form.Item>
            <Button
              icon={<CloudDownloadOutlined />}
              onClick={onFetchModels}
              loading={fetchModels.isPending}
              disabled={!channel}
              data-testid="fetch-models"
            >
              {t('channels.fetchModels')}
            </Button>
          </Flex>
        </Form.Item>
        {upstreamModels.length > 0 ? (
          <Typography.Paragraph>
            <Button
              type="link"
              size="small"
              data-testid="add-fetched-models"
              onClick={() => form.setFieldValue('models', [...new Set([...models, ...upstreamModels])])}
            >
              {t('channels.addAllFetched', { count: upstreamModels.length })}
            </Button>
          </Typography.Paragraph>
        ) : null}
        <Row gutter={16}>
          <Col xs={24} md={12}>
            <Form.Item name="groups" label={t('channels.groups')} rules={[{ ...required, type: 'array', min: 1 }]}>
              <Select mode="tags" options={(groups.data ?? []).map((g) => ({ value: g.name, label: g.name }))} />
            </Form.Item>
          </Col>
          <Col xs={24} md={12}>
            <Form.Item name="tag" label={t('channels.tag')}>
              <Input />
            </Form.Item>
          </Col>
          <Col xs={12} md={6}>
            <Form.Item name="priority" label={t('channels.priority')} tooltip={t('channels.priorityHint')}>
              <InputNumber precision={0} style={{ width: '100%' }} />
            </Form.Item>
          </Col>
          <Col xs={12} md={6}>
            <Form.Item name="weight" label={t('channels.weight')} rules={[required]}>
              <InputNumber min={0} precision={0} style={{ width: '100%' }} />
            </Form.Item>
          </Col>
          <Col xs={24} md={12}>
            <Form.Item name="test_model" label={t('channels.testModel')} extra={t('channels.testModelHint')}>
              <Select allowClear showSearch options={modelOptions} />
            </Form.Item>
          </Col>
          <Col xs={12} md={6}>
            <Form.Item name="max_concurrency" label={t('channels.maxConcurrency')} extra={t('channels.noCapHint')}>
              <InputNumber min={0} precision={0} style={{ width: '100%' }} />
            </Form.Item>
          </Col>
          <Col xs={12} md={6}>
            <Form.Item name="key_max_concurrency" label={t('channels.keyMaxConcurrency')} extra={t('channels.noCapHint')}>
              <InputNumber min={0} precision={0} style={{ width: '100%' }} />
            </Form.Item>
          </Col>
        </Row>

        <Divider titlePlacement="start">{t('costs.title')}</Divider>
        <CostFields models={models} />

        <Divider titlePlacement="start">{t('channels.modelMapping')}</Divider>
        <KeyValueEditor
          name="model_mapping"
          keyPlaceholder={t('channels.publicModel')}
          valuePlaceholder={t('channels.upstreamModel')}
          addLabel={t('channels.addMapping')}
        />

        <Divider titlePlacement="start">{t('channels.headerOverride')}</Divider>
        <Typography.Paragraph type="secondary">{t('channels.headerHint')}</Typography.Paragraph>
        <KeyValueEditor
          name="header_override"
          keyPlaceholder={t('channels.headerName')}
          valuePlaceholder={t('channels.headerValue')}
          addLabel={t('channels.addHeader')}
        />
        <Form.Item
          name="header_passthrough"
          label={t('channels.headerPassthrough')}
          extra={t('channels.headerPassthroughHint')}
          style={{ marginTop: 16 }}
        >
          <Select mode="tags" open={false} suffixIcon={null} tokenSeparators={[',', ' ']} />
        </Form.Item>

        <Divider titlePlacement="start">{t('channels.bodyOverride')}</Divider>
        <Typography.Paragraph type="secondary">{t('channels.bodySetHint')}</Typography.Paragraph>
        <KeyValueEditor
          name="body_set"
          keyPlaceholder={t('channels.bodyField')}
          valuePlaceholder={t('channels.bodyValue')}
          addLabel={t('channels.addBodySet')}
          valueRules={[]}
        />
        <Form.Item name="body_delete" label={t('channels.bodyDelete')} style={{ marginTop: 16 }}>
          <Select mode="tags" open={false} suffixIcon={null} tokenSeparators={[',', ' ']} />
        </Form.Item>

        <Divider titlePlacement="start">{t('channels.statusCodeMapping')}</Divider>
        <KeyValueEditor
          name="status_code_mapping"
          keyPlaceholder={t('channels.fromStatus')}
          valuePlaceholder={t('channels.toStatus')}
          addLabel={t('channels.addStatusMapping')}
          keyRules={[{ pattern: /^[1-5]\d\d$/, message: t('validation.statusCode') }]}
          valueRules={[{ required: true, pattern: /^[1-5]\d\d$/, message: t('validation.statusCode') }]}
        />

        <Divider titlePlacement="start">{t('channels.timeouts')}</Divider>
        <Row gutter={16}>
          {TIMEOUT_FIELDS.map((field) => (
            <Col xs={12} md={6} key={field}>
              <Form.Item name={['timeouts', field]} label={t(`channels.timeout_${field}`)} extra={t('channels.timeoutHint')}>
                <InputNumber min={0} precision={0} style={{ width: '100%' }} />
              </Form.Item>
            </Col>
          ))}
        </Row>
      </Form>
      {stepUp.modal}
    </Drawer>
  );
}
