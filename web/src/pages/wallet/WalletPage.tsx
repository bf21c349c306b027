import { Card, Col, Row, Statistic } from 'antd';
import { useTranslation } from 'react-i18next';
import { useSelf } from '../../api/auth';
import { PageHeader } from '../../components/PageHeader';
import { useFormat } from '../../lib/useFormat';
import { InviteCard } from './InviteCard';
import { OrdersCard } from './OrdersCard';
import { RedeemCard } from './RedeemCard';
import { TopupCard } from './TopupCard';

/** The user's money: balance, top-up, redeem a code, orders and the invite link. */
export default function WalletPage() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const self = useSelf();

  return (
    <>
      <PageHeader title={t('wallet.title')} />
      <Row gutter={[16, 16]}>
        <Col xs={24} md={12} xl={8}>
          <Card size="small" data-testid="wallet-balance">
            <Statistic title={t('dashboard.balance')} value={fmt.money(self.data?.quota)} loading={self.isPending} />
          </Card>
        </Col>
        <Col xs={24} md={12} xl={8}>
          <Card size="small">
            <Statistic title={t('dashboard.totalSpent')} value={fmt.money(self.data?.used_quota)} loading={self.isPending} />
          </Card>
        </Col>
        <Col xs={24} lg={14}>
          <TopupCard />
        </Col>
        <Col xs={24} lg={10}>
          <Row gutter={[16, 16]}>
            <Col xs={24}>
              <RedeemCard />
            </Col>
            <Col xs={24}>
              <InviteCard />
            </Col>
          </Row>
        </Col>
        <Col xs={24}>
          <OrdersCard />
        </Col>
      </Row>
    </>
  );
}
