import dayjs from 'dayjs';
import { Button, Form, Input, Space, Table, type TableProps } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { useRoutingDecisions, type DecisionFilter, type RoutingDecisionRow } from '../../../api/routing';
import { PageHeader } from '../../../components/PageHeader';
import { QueryError } from '../../../components/QueryError';
import { RankingTable } from '../../routing/RankingTable';

/** The routing decision log: filter by request id or model; each row opens its ranking. */
export default function DecisionsPage() {
  const { t } = useTranslation();
  const [params, setParams] = useSearchParams();
  const [cursor, setCursor] = useState<number | undefined>();
  const filter: DecisionFilter = { request_id: params.get('request_id') ?? '', model: params.get('model') ?? '', cursor };
  const decisions = useRoutingDecisions(filter);
  const rows = decisions.data?.items ?? [];

  const onSearch = (v: { request_id?: string; model?: string }) => {
    const next = new URLSearchParams();
    if (v.request_id?.trim()) next.set('request_id', v.request_id.trim());
    if (v.model?.trim()) next.set('model', v.model.trim());
    setCursor(undefined);
    setParams(next);
  };

  const columns: TableProps<RoutingDecisionRow>['columns'] = [
    { title: t('routing.time'), dataIndex: 'created_at', render: (v: string) => dayjs(v).format('YYYY-MM-DD HH:mm:ss') },
    { title: t('routing.requestId'), dataIndex: 'request_id', render: (v: string) => <span className="tg-mono">{v}</span> },
    { title: t('routing.model'), dataIndex: 'model' },
    { title: t('routing.group'), dataIndex: 'group' },
    { title: t('routing.strategy'), dataIndex: 'strategy', render: (v: string) => t(`routing.strategy_${v}`, { defaultValue: v }) },
    { title: t('routing.chosen'), dataIndex: 'channel_id', render: (v: number) => (v ? `#${v}` : t('common.none')) },
    { title: t('routing.reason'), dataIndex: 'reason' },
    { title: t('routing.decisionUs'), dataIndex: 'decision_us' },
  ];

  return (
    <>
      <PageHeader title={t('routing.decisionsTitle')} />
      <Form layout="inline" onFinish={onSearch} initialValues={{ request_id: filter.request_id, model: filter.model }} style={{ marginBottom: 16 }}>
        <Form.Item name="request_id" label={t('routing.requestId')}>
          <Input allowClear style={{ width: 300 }} />
        </Form.Item>
        <Form.Item name="model" label={t('routing.model')}>
          <Input allowClear />
        </Form.Item>
        <Button type="primary" htmlType="submit">
          {t('routing.search')}
        </Button>
      </Form>
      {decisions.error ? <QueryError error={decisions.error} onRetry={() => void decisions.refetch()} /> : null}
      <Table<RoutingDecisionRow>
        rowKey="id"
        columns={columns}
        dataSource={rows}
        loading={decisions.isPending}
        scroll={{ x: 'max-content' }}
        pagination={false}
        expandable={{
          defaultExpandAllRows: !!filter.request_id,
          expandedRowRender: (r) => <RankingTable candidates={r.candidates?.ranking ?? []} />,
        }}
      />
      <Space style={{ marginTop: 12 }}>
        {decisions.data?.next_cursor ? (
          <Button onClick={() => setCursor(decisions.data?.next_cursor ?? undefined)}>{t('routing.more')}</Button>
        ) : null}
      </Space>
    </>
  );
}
