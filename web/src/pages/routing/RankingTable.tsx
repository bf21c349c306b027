import { Table, Tag, Tooltip } from 'antd';
import { useTranslation } from 'react-i18next';
import type { RankedCandidate } from '../../api/routing';

const pct = (v?: number) => (v === undefined ? '' : `${(v * 100).toFixed(1)}%`);
const num = (v?: number, digits = 0) => (v === undefined || v === 0 ? '' : v.toFixed(digits));

/** A routing ranking (the simulator's, a decision's): candidates in order, then the excluded ones. */
export function RankingTable({ candidates }: { candidates: RankedCandidate[] }) {
  const { t } = useTranslation();
  const rows = candidates.map((c, i) => ({ ...c, n: i + 1 }));
  return (
    <Table<RankedCandidate & { n: number }>
      size="small"
      rowKey={(c) => `${c.group}:${c.channel_id}:${c.n}`}
      pagination={false}
      scroll={{ x: 'max-content' }}
      dataSource={rows}
      locale={{ emptyText: t('routing.noCandidates') }}
      data-testid="ranking"
      columns={[
        { title: t('routing.rank'), dataIndex: 'n', render: (n: number, c) => (c.excluded ? '' : n) },
        {
          title: t('routing.channel'),
          key: 'channel',
          render: (_, c) => (
            <span data-testid="ranking-channel">
              {c.name} <span className="tg-mono">#{c.channel_id}</span>
            </span>
          ),
        },
        { title: t('routing.group'), dataIndex: 'group' },
        { title: t('routing.score'), dataIndex: 'score', render: (v: number, c) => (c.excluded ? '' : v.toFixed(3)) },
        { title: t('routing.share'), dataIndex: 'share', render: (v: number, c) => (c.excluded || !v ? '' : pct(v)) },
        { title: t('routing.success'), key: 'success', render: (_, c) => (c.inputs?.source || c.inputs?.samples ? pct(c.inputs?.success) : '') },
        { title: t('routing.latency'), key: 'latency', render: (_, c) => num(c.inputs?.latency_ms) },
        { title: t('routing.p95'), key: 'p95', render: (_, c) => num(c.inputs?.p95_ms) },
        { title: t('routing.price'), key: 'price', render: (_, c) => (c.inputs ? String(c.inputs.price) : '') },
        { title: t('routing.samples'), key: 'samples', render: (_, c) => num(c.inputs?.samples) },
        {
          title: t('routing.reason'),
          key: 'reason',
          render: (_, c) => (
            <>
              {c.excluded ? <Tag color="red">{t('routing.excluded')}</Tag> : null}
              {c.exploring ? <Tag color="blue">{t('routing.exploring')}</Tag> : null}
              {c.demoted ? <Tag color="orange">{t('routing.demoted')}</Tag> : null}
              <Tooltip title={c.pref}>
                <span data-testid="ranking-reason">{c.reason}</span>
              </Tooltip>
            </>
          ),
        },
      ]}
    />
  );
}
