import { MinusCircleOutlined, PlusOutlined } from '@ant-design/icons';
import { App, Button, Card, Col, Collapse, Divider, Form, Input, Row, Select, Switch, Typography } from 'antd';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useSaveSettings } from '../../../api/settings';
import type { OAuthSettings, OIDCProviderSettings } from '../../../api/types/oauth';
import { applyServerError } from '../../../lib/validation';

const EMPTY: OAuthSettings = {
  github: { enabled: false, client_id: '', client_secret: '', auth_url: '', token_url: '', api_url: '' },
  oidc: [],
};

/** settings.oauth as the form edits it (absent fields filled, so the saved object is complete). */
export function normalizeOAuth(o: Partial<OAuthSettings> | undefined): OAuthSettings {
  return {
    github: { ...EMPTY.github, ...o?.github },
    oidc: (o?.oidc ?? []).map((p) => ({ ...p, scopes: p.scopes ?? [] })),
  };
}

/** The callback URL a provider must have registered for slug. */
export function callbackURL(slug: string): string {
  return `${window.location.origin}/api/auth/oauth/${slug || '<slug>'}/callback`;
}

/** Sign-in providers (GitHub, OIDC): its own form, saved as the one "oauth" setting. */
export function OAuthProvidersCard({ value }: { value: Partial<OAuthSettings> | undefined }) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const save = useSaveSettings();
  const [form] = Form.useForm<OAuthSettings>();
  const oidc = Form.useWatch('oidc', form) as OIDCProviderSettings[] | undefined;

  useEffect(() => {
    form.setFieldsValue(normalizeOAuth(value));
  }, [value, form]);

  const onFinish = async (values: OAuthSettings) => {
    const body = normalizeOAuth({
      github: values.github,
      oidc: (values.oidc ?? []).map((p) => ({ ...p, slug: p.slug.trim(), name: p.name.trim(), issuer: p.issuer.trim() })),
    });
    try {
      await save.mutateAsync({ oauth: body });
      message.success(t('common.saved'));
    } catch (err) {
      const text = applyServerError(form, err);
      if (text) message.error(text);
    }
  };

  return (
    <Card title={t('oauth.settingsTitle')} data-testid="oauth-settings">
      <Typography.Paragraph type="secondary">{t('oauth.settingsHint')}</Typography.Paragraph>
      <Form<OAuthSettings> form={form} layout="vertical" onFinish={onFinish} name="oauth-settings">
        <Divider titlePlacement="start">{t('oauth.github')}</Divider>
        <Row gutter={16}>
          <Col xs={24} md={4}>
            <Form.Item name={['github', 'enabled']} label={t('oauth.enabled')} valuePropName="checked">
              <Switch />
            </Form.Item>
          </Col>
          <Col xs={24} md={10}>
            <Form.Item name={['github', 'client_id']} label={t('oauth.clientId')}>
              <Input autoComplete="off" />
            </Form.Item>
          </Col>
          <Col xs={24} md={10}>
            <Form.Item name={['github', 'client_secret']} label={t('oauth.clientSecret')}>
              <Input.Password autoComplete="new-password" />
            </Form.Item>
          </Col>
        </Row>
        <Typography.Paragraph type="secondary" copyable={{ text: callbackURL('github') }}>
          {t('oauth.callbackUrl')}: {callbackURL('github')}
        </Typography.Paragraph>
        <Collapse
          size="small"
          items={[
            {
              key: 'ghe',
              label: t('oauth.advanced'),
              forceRender: true,
              children: (
                <Row gutter={16}>
                  {(['auth_url', 'token_url', 'api_url'] as const).map((f) => (
                    <Col xs={24} md={8} key={f}>
                      <Form.Item name={['github', f]} label={t(`oauth.${f === 'auth_url' ? 'authUrl' : f === 'token_url' ? 'tokenUrl' : 'apiUrl'}`)}>
                        <Input />
                      </Form.Item>
                    </Col>
                  ))}
                </Row>
              ),
            },
          ]}
        />
        <Divider titlePlacement="start">{t('oauth.oidcProviders')}</Divider>
        <Form.List name="oidc">
          {(fields, { add, remove }) => (
            <>
              {fields.map((field) => (
                <Card
                  key={field.key}
                  size="small"
                  style={{ marginBottom: 12 }}
                  title={oidc?.[field.name]?.name || t('oauth.addProvider')}
                  extra={
                    <Button type="text" danger icon={<MinusCircleOutlined />} onClick={() => remove(field.name)}>
                      {t('oauth.removeProvider')}
                    </Button>
                  }
                >
                  <Row gutter={16}>
                    <Col xs={24} md={4}>
                      <Form.Item name={[field.name, 'enabled']} label={t('oauth.enabled')} valuePropName="checked">
                        <Switch />
                      </Form.Item>
                    </Col>
                    <Col xs={24} md={8}>
                      <Form.Item
                        name={[field.name, 'slug']}
                        label={t('oauth.slug')}
                        extra={t('oauth.slugHint')}
                        rules={[{ required: true, pattern: /^[a-z0-9][a-z0-9-]{0,31}$/, message: t('oauth.slugHint') }]}
                      >
                        <Input />
                      </Form.Item>
                    </Col>
                    <Col xs={24} md={12}>
                      <Form.Item name={[field.name, 'name']} label={t('oauth.name')} rules={[{ required: true, message: t('validation.required') }]}>
                        <Input maxLength={64} />
                      </Form.Item>
                    </Col>
                    <Col xs={24} md={12}>
                      <Form.Item
                        name={[field.name, 'issuer']}
                        label={t('oauth.issuer')}
                        extra={t('oauth.issuerHint')}
                        rules={[{ required: true, type: 'url', message: t('validation.required') }]}
                      >
                        <Input />
                      </Form.Item>
                    </Col>
                    <Col xs={24} md={12}>
                      <Form.Item name={[field.name, 'scopes']} label={t('oauth.scopes')} extra={t('oauth.scopesHint')}>
                        <Select mode="tags" tokenSeparators={[' ', ',']} open={false} suffixIcon={null} />
                      </Form.Item>
                    </Col>
                    <Col xs={24} md={12}>
                      <Form.Item name={[field.name, 'client_id']} label={t('oauth.clientId')} rules={[{ required: true, message: t('validation.required') }]}>
                        <Input autoComplete="off" />
                      </Form.Item>
                    </Col>
                    <Col xs={24} md={12}>
                      <Form.Item name={[field.name, 'client_secret']} label={t('oauth.clientSecret')}>
                        <Input.Password autoComplete="new-password" />
                      </Form.Item>
                    </Col>
                  </Row>
                  <Typography.Text type="secondary" copyable={{ text: callbackURL(oidc?.[field.name]?.slug ?? '') }}>
                    {t('oauth.callbackUrl')}: {callbackURL(oidc?.[field.name]?.slug ?? '')}
                  </Typography.Text>
                </Card>
              ))}
              <Button
                type="dashed"
                icon={<PlusOutlined />}
                onClick={() => add({ enabled: true, slug: '', name: '', issuer: '', client_id: '', client_secret: '', scopes: [] })}
                data-testid="oauth-add-provider"
              >
                {t('oauth.addProvider')}
              </Button>
            </>
          )}
        </Form.List>
        <div style={{ marginTop: 16 }}>
          <Button type="primary" htmlType="submit" loading={save.isPending}>
            {t('oauth.save')}
          </Button>
        </div>
      </Form>
    </Card>
  );
}
