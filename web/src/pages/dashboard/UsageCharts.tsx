import { Card, Col, Row } from 'antd';
import type { EChartsOption } from 'echarts';
import type dayjs from 'dayjs';
import { useTranslation } from 'react-i18next';
import type { LogStats } from '../../api/types';
import { Chart } from '../../components/Chart';
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

  const spendByDay: EChartsOption = {
    tooltip: { trigger: 'axis', valueFormatter: (v) => money(Number(v)) },
    grid: { left: 8, right: 16, top: 24, bottom: 8, containLabel: true },
    xAxis: { type: 'category', data: dates },
    yAxis: { type: 'value', axisLabel: { formatter: (v: number) => money(v) } },
    series: [
      { name: t('dashboard.spend'), type: 'line', smooth: true, areaStyle: {}, data: days.map((d) => d.cost / UNITS_PER_USD) },
    ],
  };

  const tokensByDay: EChartsOption = {
    tooltip: { trigger: 'axis' },
    legend: { top: 0 },
    grid: { left: 8, right: 16, top: 32, bottom: 8, containLabel: true },
    xAxis: { type: 'category', data: dates },
    yAxis: { type: 'value' },
    series: [
      { name: t('logs.promptTokens'), type: 'bar', stack: 'tokens', data: days.map((d) => d.prompt_tokens) },
      { name: t('logs.completionTokens'), type: 'bar', stack: 'tokens', data: days.map((d) => d.completion_tokens) },
    ],
  };

  const models = [...stats.models].sort((a, b) => b.cost - a.cost);
  const spendByModel: EChartsOption = {
    tooltip: { trigger: 'item', valueFormatter: (v) => money(Number(v)) },
    legend: { type: 'scroll', bottom: 0 },
    series: [
      {
        name: t('dashboard.spend'),
        type: 'pie',
        radius: ['40%', '68%'],
        center: ['50%', '45%'],
        data: models.map((m) => ({ name: m.model, value: m.cost / UNITS_PER_USD })),
      },
    ],
  };

  const tokensByModel: EChartsOption = {
    tooltip: { trigger: 'axis' },
    legend: { top: 0 },
    grid: { left: 8, right: 16, top: 32, bottom: 8, containLabel: true },
    xAxis: { type: 'value' },
    yAxis: { type: 'category', data: models.map((m) => m.model) },
    series: [
      { name: t('logs.promptTokens'), type: 'bar', stack: 'tokens', data: models.map((m) => m.prompt_tokens) },
      { name: t('logs.completionTokens'), type: 'bar', stack: 'tokens', data: models.map((m) => m.completion_tokens) },
    ],
  };

  return (
    <Row gutter={[16, 16]}>
      <Col xs={24} xl={12}>
        <Card title={t('dashboard.spendPerDay')} size="small">
          <Chart option={spendByDay} />
        </Card>
      </Col>
      <Col xs={24} xl={12}>
        <Card title={t('dashboard.tokensPerDay')} size="small">
          <Chart option={tokensByDay} />
        </Card>
      </Col>
      <Col xs={24} xl={12}>
        <Card title={t('dashboard.spendPerModel')} size="small">
          <Chart option={spendByModel} />
        </Card>
      </Col>
      <Col xs={24} xl={12}>
        <Card title={t('dashboard.tokensPerModel')} size="small">
          <Chart option={tokensByModel} />
        </Card>
      </Col>
    </Row>
  );
}
