import { Card, Col, Empty, Row, Skeleton, Statistic, Typography } from 'antd';
import dayjs from 'dayjs';
import { lazy, Suspense, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useLogStats } from '../../api/logs';
import { PageHeader } from '../../components/PageHeader';
import { QueryError } from '../../components/QueryError';
import { useSession } from '../../auth/SessionProvider';
import { useFormat } from '../../lib/useFormat';
import { SiteDashboard } from './SiteDashboard';
import { dashboardRanges } from './stats';

// The charts load on demand: the cards render while the charts' code still loads.
const UsageCharts = lazy(() => import('./UsageCharts').then((m) => ({ default: m.UsageCharts })));

export default function DashboardPage() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { user, isAdmin } = useSession();
  const [ranges] = useState(() => dashboardRanges());
  const today = useLogStats(ranges.today);
  const week = useLogStats(ranges.week);
  const month = useLogStats(ranges.month);
  const monthFrom = useMemo(() => dayjs(ranges.month.from), [ranges]);

  const cards = [
    { key: 'balance', title: t('dashboard.balance'), value: fmt.money(user?.quota), loading: !user },
    { key: 'used', title: t('dashboard.totalSpent'), value: fmt.money(user?.used_quota), loading: !user },
    { key: 'today', title: t('dashboard.spendToday'), value: fmt.money(today.data?.totals.cost), loading: today.isPending },
    { key: 'week', title: t('dashboard.spend7d'), value: fmt.money(week.data?.totals.cost), loading: week.isPending },
    { key: 'month', title: t('dashboard.spend30d'), value: fmt.money(month.data?.totals.cost), loading: month.isPending },
    {
      key: 'requests',
      title: t('dashboard.requests30d'),
      value: fmt.number(month.data?.totals.requests),
      loading: month.isPending,
    },
  ];

  return (
    <>
      <PageHeader title={t('dashboard.title')} />
      {isAdmin ? <SiteDashboard /> : null}
      {isAdmin ? (
        <Typography.Title level={2} style={{ fontSize: 18, marginTop: 0 }}>
          {t('site.mine')}
        </Typography.Title>
      ) : null}
      {month.error ? <QueryError error={month.error} onRetry={() => void month.refetch()} /> : null}
      <Row gutter={[16, 16]}>
        {cards.map((card) => (
          <Col key={card.key} xs={12} md={8} xl={4}>
            <Card size="small" data-testid={`stat-${card.key}`}>
              <Statistic title={card.title} value={card.value} loading={card.loading} />
            </Card>
          </Col>
        ))}
      </Row>
      <div style={{ marginTop: 16 }}>
        {month.isPending ? (
          <Card>
            <Skeleton active />
          </Card>
        ) : month.data && month.data.totals.requests > 0 ? (
          <Suspense fallback={<Skeleton active />}>
            <UsageCharts stats={month.data} from={monthFrom} to={dayjs()} />
          </Suspense>
        ) : month.data ? (
          <Card>
            <Empty description={t('dashboard.noUsage')} />
          </Card>
        ) : null}
      </div>
    </>
  );
}
