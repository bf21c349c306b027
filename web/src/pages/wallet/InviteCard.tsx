import { CopyOutlined } from '@ant-design/icons';
import { App, Button, Card, Col, Input, List, Row, Skeleton, Space, Statistic, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { useInvites } from '../../api/wallet';
import { QueryError } from '../../components/QueryError';
import { formatTime } from '../../lib/format';
import { useFormat } from '../../lib/useFormat';
import { inviteLink } from './walletLogic';

/** Copy text to the clipboard, answering whether it worked. */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/** The caller's invite link with how many signed up through it and what it earned. */
export function InviteCard() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { message } = App.useApp();
  const invites = useInvites();
  const link = invites.data?.aff_code ? inviteLink(window.location.origin, invites.data.aff_code) : '';

  const onCopy = async () => {
    if (await copyText(link)) message.success(t('common.copied'));
    else message.error(t('wallet.copyFailed'));
  };

  return (
    <Card title={t('wallet.invite')}>
      {invites.error ? <QueryError error={invites.error} onRetry={() => void invites.refetch()} /> : null}
      {invites.isPending ? (
        <Skeleton active paragraph={{ rows: 2 }} />
      ) : invites.data ? (
        <>
          <Space.Compact style={{ width: '100%', marginBottom: 16 }}>
            <Input readOnly value={link} aria-label={t('wallet.inviteLink')} data-testid="invite-link" className="tg-mono" />
            <Button icon={<CopyOutlined />} onClick={() => void onCopy()} aria-label={t('common.copy')}>
              {t('common.copy')}
            </Button>
          </Space.Compact>
          <Row gutter={16}>
            <Col span={12}>
              <div data-testid="invite-count">
                <Statistic title={t('wallet.invited')} value={fmt.number(invites.data.invited)} />
              </div>
            </Col>
            <Col span={12}>
              <div data-testid="invite-rewards">
                <Statistic title={t('wallet.rewards')} value={fmt.money(invites.data.rewarded_quota)} />
              </div>
            </Col>
          </Row>
          {invites.data.latest?.length ? (
            <List
              size="small"
              header={<Typography.Text type="secondary">{t('wallet.latestInvitees')}</Typography.Text>}
              dataSource={invites.data.latest}
              renderItem={(item) => (
                <List.Item extra={formatTime(item.created_at)}>
                  <span className="tg-mono">{item.username}</span>
                </List.Item>
              )}
            />
          ) : null}
        </>
      ) : null}
    </Card>
  );
}
