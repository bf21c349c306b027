import { App, Alert, Button, Card, Flex, Input, List, QRCode, Space, Tag, Typography } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import {
  useTwoFactor,
  useTwoFactorDisable,
  useTwoFactorEnable,
  useTwoFactorSetup,
  type TwoFactorSetup,
} from '../../api/security';
import { QueryError } from '../../components/QueryError';

/** Profile card: turn two-factor sign-in on (QR code, secret, a first code; backup codes shown once) or off. */
export function TwoFactorCard() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const status = useTwoFactor();
  const setup = useTwoFactorSetup();
  const enable = useTwoFactorEnable();
  const disable = useTwoFactorDisable();
  const [pending, setPending] = useState<TwoFactorSetup | null>(null);
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState<string[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  const start = () =>
    setup.mutate(undefined, {
      onSuccess: (s) => {
        setPending(s);
        setCode('');
        setError(null);
      },
      onError: (err) => message.error(err.message),
    });
  const confirm = () =>
    enable.mutate(code.trim(), {
      onSuccess: (res) => {
        setCodes(res.backup_codes);
        setPending(null);
        setCode('');
        setError(null);
      },
      onError: (err) => setError(err.message),
    });
  const turnOff = () =>
    disable.mutate(code.trim(), {
      onSuccess: () => {
        setCode('');
        setError(null);
        message.success(t('security.disabled'));
      },
      onError: (err) => setError(err.message),
    });
  const copy = () => {
    if (codes) void navigator.clipboard?.writeText(codes.join('\n')).then(() => message.success(t('security.copied')));
  };

  const codeInput = (onEnter: () => void) => (
    <Input
      aria-label={t('security.code')}
      placeholder={t('security.codePlaceholder')}
      value={code}
      onChange={(e) => setCode(e.target.value)}
      onPressEnter={onEnter}
      autoComplete="one-time-code"
      maxLength={32}
      style={{ maxWidth: 220 }}
    />
  );

  return (
    <Card
      title={t('security.twoFactorTitle')}
      extra={status.data ? <Tag color={status.data.enabled ? 'green' : undefined}>{status.data.enabled ? t('security.on') : t('security.off')}</Tag> : null}
    >
      {status.error ? <QueryError error={status.error} onRetry={() => void status.refetch()} /> : null}
      {error ? <Alert type="error" showIcon title={error} style={{ marginBottom: 12 }} /> : null}
      {codes ? (
        <Space orientation="vertical" style={{ width: '100%', marginBottom: 12 }}>
          <Alert type="warning" showIcon title={t('security.backupCodesOnce')} />
          <List
            size="small"
            bordered
            dataSource={codes}
            renderItem={(c) => (
              <List.Item>
                <Typography.Text className="tg-mono">{c}</Typography.Text>
              </List.Item>
            )}
            data-testid="backup-codes"
          />
          <Space>
            <Button onClick={copy}>{t('security.copyCodes')}</Button>
            <Button type="primary" onClick={() => setCodes(null)}>
              {t('security.savedCodes')}
            </Button>
          </Space>
        </Space>
      ) : null}
      {status.data?.enabled ? (
        <Space orientation="vertical" style={{ width: '100%' }}>
          <Typography.Paragraph type="secondary">
            {t('security.enabledHint', { count: status.data.backup_codes_left })}
          </Typography.Paragraph>
          <Flex gap={8} wrap>
            {codeInput(turnOff)}
            <Button danger onClick={turnOff} loading={disable.isPending} disabled={!code.trim()}>
              {t('security.disable')}
            </Button>
          </Flex>
        </Space>
      ) : pending ? (
        <Space orientation="vertical" style={{ width: '100%' }}>
          <Typography.Paragraph>{t('security.scanHint')}</Typography.Paragraph>
          <QRCode value={pending.otpauth_url} size={180} bordered={false} />
          <Typography.Paragraph>
            {t('security.secretLabel')}{' '}
            <Typography.Text className="tg-mono" copyable data-testid="totp-secret">
              {pending.secret}
            </Typography.Text>
          </Typography.Paragraph>
          <Flex gap={8} wrap>
            {codeInput(confirm)}
            <Button type="primary" onClick={confirm} loading={enable.isPending} disabled={!code.trim()}>
              {t('security.enable')}
            </Button>
            <Button onClick={() => setPending(null)}>{t('common.cancel')}</Button>
          </Flex>
        </Space>
      ) : status.data ? (
        <Space orientation="vertical">
          <Typography.Paragraph type="secondary">{t('security.offHint')}</Typography.Paragraph>
          <Button type="primary" onClick={start} loading={setup.isPending}>
            {t('security.setUp')}
          </Button>
        </Space>
      ) : null}
    </Card>
  );
}
