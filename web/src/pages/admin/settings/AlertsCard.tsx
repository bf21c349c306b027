import { DeleteOutlined, PlusOutlined, SendOutlined } from '@ant-design/icons';
import { App, Button, Card, Col, Divider, Flex, Form, Input, InputNumber, Row, Select, Space, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { useTestAlert } from '../../../api/alerts';
import { ALERT_EVENTS, SMTP_TLS } from './alertsForm';

const HOURS = Array.from({ length: 24 }, (_, h) => h);

/** The Alerts section of the settings form (fields under `alerts`), with test-send buttons. */
export function AlertsCard({ dirty }: { dirty: boolean }) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const test = useTestAlert();
  const required = { required: true, message: t('validation.required') };

  const onTest = (channel: 'webhook' | 'email') =>
    test.mutate(channel, {
      onSuccess: (res) => {
        const rows = res.items ?? [];
        const failed = rows.filter((r) => r.status !== 'sent');
        if (rows.length === 0) message.warning(t('alertSettings.testNone'));
        else if (failed.length === 0) message.success(t('alertSettings.testSent', { count: rows.length }));
        else message.error(t('alertSettings.testFailed', { count: failed.length, error: failed[0].error || failed[0].status }));
      },
      onError: (err) => message.error(err.message),
    });

  const testButton = (channel: 'webhook' | 'email') => (
    <Button
      icon={<SendOutlined />}
      onClick={() => onTest(channel)}
      loading={test.isPending && test.variables === channel}
      data-testid={`alert-test-${channel}`}
    >
      {t(`alertSettings.test_${channel}`)}
    </Button>
  );

  return (
    <Card title={t('alertSettings.title')} data-testid="alerts-card">
      <Typography.Paragraph type="secondary">{t('alertSettings.hint')}</Typography.Paragraph>
      {dirty ? <Typography.Paragraph type="warning">{t('alertSettings.saveBeforeTest')}</Typography.Paragraph> : null}
      <Row gutter={16}>
        <Col xs={24} md={8}>
          <Form.Item
            name={['alerts', 'cooldown_s']}
            label={t('alertSettings.cooldown')}
            extra={t('alertSettings.cooldownHint')}
            rules={[required, { type: 'number', min: 10, max: 604800, message: t('settings.range', { min: 10, max: 604800 }) }]}
          >
            <InputNumber min={10} max={604800} precision={0} suffix={t('settings.unit_seconds')} style={{ width: '100%' }} />
          </Form.Item>
        </Col>
        <Col xs={24} md={8}>
          <Form.Item name={['alerts', 'daily_summary_hour_utc']} label={t('alertSettings.dailySummary')} extra={t('alertSettings.dailySummaryHint')}>
            <Select
              options={[
                { value: -1, label: t('alertSettings.off') },
                ...HOURS.map((h) => ({ value: h, label: t('alertSettings.hourUtc', { hour: String(h).padStart(2, '0') }) })),
              ]}
            />
          </Form.Item>
        </Col>
      </Row>
      <Typography.Text strong>{t('alertSettings.errorRate')}</Typography.Text>
      <Typography.Paragraph type="secondary">{t('alertSettings.errorRateHint')}</Typography.Paragraph>
      <Row gutter={16}>
        <Col xs={24} md={8}>
          <Form.Item
            name={['alerts', 'error_rate', 'threshold_percent']}
            label={t('alertSettings.threshold')}
            rules={[{ type: 'number', min: 0, max: 100, message: t('settings.range', { min: 0, max: 100 }) }]}
          >
            <InputNumber min={0} max={100} step={1} suffix="%" style={{ width: '100%' }} data-testid="alert-threshold" />
          </Form.Item>
        </Col>
        <Col xs={12} md={8}>
          <Form.Item
            name={['alerts', 'error_rate', 'window_s']}
            label={t('alertSettings.window')}
            rules={[{ type: 'number', min: 60, max: 86400, message: t('settings.range', { min: 60, max: 86400 }) }]}
          >
            <InputNumber min={60} max={86400} precision={0} suffix={t('settings.unit_seconds')} style={{ width: '100%' }} />
          </Form.Item>
        </Col>
        <Col xs={12} md={8}>
          <Form.Item
            name={['alerts', 'error_rate', 'min_requests']}
            label={t('alertSettings.minRequests')}
            rules={[{ type: 'number', min: 1, max: 1000000, message: t('settings.range', { min: 1, max: 1000000 }) }]}
          >
            <InputNumber min={1} max={1000000} precision={0} style={{ width: '100%' }} />
          </Form.Item>
        </Col>
      </Row>

      <Divider titlePlacement="start">{t('alertSettings.webhooks')}</Divider>
      <Typography.Paragraph type="secondary">{t('alertSettings.webhooksHint')}</Typography.Paragraph>
      <Form.List name={['alerts', 'webhooks']}>
        {(fields, { add, remove }) => (
          <Flex vertical gap={8}>
            {fields.map((field) => (
              <Flex key={field.key} gap={8} align="start" wrap data-testid="webhook-row">
                <Form.Item
                  name={[field.name, 'url']}
                  style={{ flex: '3 1 240px', marginBottom: 0 }}
                  rules={[required, { pattern: /^https?:\/\/\S+$/, message: t('validation.url') }]}
                >
                  <Input placeholder={t('alertSettings.webhookUrl')} aria-label={t('alertSettings.webhookUrl')} />
                </Form.Item>
                <Form.Item
                  name={[field.name, 'secret']}
                  style={{ flex: '2 1 180px', marginBottom: 0 }}
                  rules={[required, { min: 16, max: 256, message: t('alertSettings.secretLength') }]}
                >
                  <Input.Password placeholder={t('alertSettings.secret')} aria-label={t('alertSettings.secret')} autoComplete="new-password" />
                </Form.Item>
                <Form.Item name={[field.name, 'events']} style={{ flex: '3 1 240px', marginBottom: 0 }}>
                  <Select
                    mode="multiple"
                    allowClear
                    placeholder={t('alertSettings.allEvents')}
                    aria-label={t('alertSettings.events')}
                    options={ALERT_EVENTS.map((e) => ({ value: e, label: t(`alertEvents.${e.replace('.', '_')}`) }))}
                  />
                </Form.Item>
                <Button type="text" danger aria-label={t('common.remove')} icon={<DeleteOutlined />} onClick={() => remove(field.name)} />
              </Flex>
            ))}
            <Space wrap>
              <Button type="dashed" icon={<PlusOutlined />} onClick={() => add({ url: '', secret: '', events: [] })} data-testid="add-webhook">
                {t('alertSettings.addWebhook')}
              </Button>
              {testButton('webhook')}
            </Space>
          </Flex>
        )}
      </Form.List>

      <Divider titlePlacement="start">{t('alertSettings.smtp')}</Divider>
      <Row gutter={16}>
        <Col xs={24} md={12}>
          <Form.Item name={['alerts', 'smtp', 'host']} label={t('alertSettings.smtpHost')} extra={t('alertSettings.smtpHostHint')}>
            <Input placeholder={t('alertSettings.smtpHostPlaceholder')} />
          </Form.Item>
        </Col>
        <Col xs={12} md={6}>
          <Form.Item
            name={['alerts', 'smtp', 'port']}
            label={t('alertSettings.smtpPort')}
            rules={[{ type: 'number', min: 1, max: 65535, message: t('settings.range', { min: 1, max: 65535 }) }]}
          >
            <InputNumber min={1} max={65535} precision={0} style={{ width: '100%' }} />
          </Form.Item>
        </Col>
        <Col xs={12} md={6}>
          <Form.Item name={['alerts', 'smtp', 'tls']} label={t('alertSettings.smtpTls')}>
            <Select options={SMTP_TLS.map((m) => ({ value: m, label: t(`alertSettings.tls_${m}`) }))} />
          </Form.Item>
        </Col>
        <Col xs={24} md={12}>
          <Form.Item name={['alerts', 'smtp', 'user']} label={t('alertSettings.smtpUser')}>
            <Input autoComplete="off" />
          </Form.Item>
        </Col>
        <Col xs={24} md={12}>
          <Form.Item name={['alerts', 'smtp', 'password']} label={t('alertSettings.smtpPassword')}>
            <Input.Password autoComplete="new-password" />
          </Form.Item>
        </Col>
        <Col xs={24} md={12}>
          <Form.Item
            name={['alerts', 'smtp', 'from']}
            label={t('alertSettings.smtpFrom')}
            rules={[{ type: 'email', message: t('validation.email') }]}
          >
            <Input placeholder={t('alertSettings.smtpFromPlaceholder')} />
          </Form.Item>
        </Col>
        <Col xs={24} md={12}>
          <Form.Item name={['alerts', 'smtp', 'admin_to']} label={t('alertSettings.adminTo')} extra={t('alertSettings.adminToHint')}>
            <Select mode="tags" open={false} suffixIcon={null} tokenSeparators={[',', ' ', ';']} />
          </Form.Item>
        </Col>
      </Row>
      {testButton('email')}
    </Card>
  );
}
