import { Card, Col, Row } from 'antd';
import type dayjs from 'dayjs';
import { useTranslation } from 'react-i18next';
import type { LogStats } from '../../api/types';
import { DonutChart, SeriesChart } from '../../components/Chart';
import { UNITS_PER_USD } from '../../lib/money';
import { useFormat } from '../../lib/useFormat';
import { fillDays } from './stats';

/** Spend and tokens per day and per model, from the stats API. */
export function UsageCharts({ stats, from, to }: { stats: LogStats; from: dayjs.Dayjs; to: dayjs.Dayjs }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const days = fillDays(stats.days, from, to);
  const dates = days.map((d) => d.date.slice(5));
  const money = (units: number) => fmt.money(units * UNITS_PER_USD);

  const models = [...stats.models].sort((a, b) => b.cost - a.cost);
  const tokenSeries = (rows: { prompt_tokens: number; completion_tokens: number }[]) => [
    { name: t('logs.promptTokens'), kind: 'bar' as const, stack: true, values: rows.map((r) => r.prompt_tokens) },
    { name: t('logs.completionTokens'), kind: 'bar' as const, stack: true, values: rows.map((r) => r.completion_tokens) },
  ];
  const number = (v: number) => fmt.number(v);

  return (
    <Row gutter={[16, 16]}>
      <Col xs={24} xl={12}>
        <Card title={t('dashboard.spendPerDay')} size="small">
          <SeriesChart
            label={t('dashboard.spendPerDay')}
            categories={dates}
            format={money}
            series={[{ name: t('dashboard.spend'), kind: 'line', area: true, values: days.map((d) => d.cost / UNITS_PER_USD) }]}
          />
        </Card>
      </Col>
      <Col xs={24} xl={12}>
        <Card title={t('dashboard.tokensPerDay')} size="small">
          <SeriesChart label={t('dashboard.tokensPerDay')} categories={dates} format={number} series={tokenSeries(days)} />
        </Card>
      </Col>
      <Col xs={24} xl={12}>
        <Card title={t('dashboard.spendPerModel')} size="small">
          <DonutChart
            label={t('dashboard.spendPerModel')}
            format={money}
            items={models.map((m) => ({ name: m.model, value: m.cost / UNITS_PER_USD }))}
          />
        </Card>
      </Col>
      <Col xs={24} xl={12}>
        <Card title={t('dashboard.tokensPerModel')} size="small">
          <SeriesChart
            label={t('dashboard.tokensPerModel')}
            categories={models.map((m) => m.model)}
            format={number}
            horizontal
            series={tokenSeries(models)}
          />
        </Card>
      </Col>
    </Row>
  );
}
