import { Descriptions, Drawer, Table, Tag, Typography } from 'antd';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import type { LogAttempt, RoutingCandidate, RoutingDecision, UsageLog } from '../../api/types';
import { formatTime } from '../../lib/format';
import { useFormat } from '../../lib/useFormat';
import { priceBreakdown, type BreakdownLine } from './priceBreakdown';
import { WIDE_DRAWER } from '../../components/drawerSize';

/** "hit:session" → "Kept its sticky binding (Session)"; unknown words are shown as written. */
export function stickyText(sticky: string, t: TFunction): string {
  const [outcome, level] = sticky.split(':', 2);
  const text = t(`logs.sticky_${outcome}`, { defaultValue: outcome });
  return level ? `${text} (${t(`logicalGroups.level_${level}`, { defaultValue: level })})` : text;
}

type Outcome = 'skipped' | 'failed' | 'chosen' | 'considered';

const OUTCOME_COLORS: Record<Outcome, string> = { skipped: 'default', failed: 'warning', chosen: 'success', considered: 'processing' };

/** What happened to one candidate: skipped before a call, tried and failed, or the one that answered. */
export function candidateOutcome(c: RoutingCandidate, chosen: RoutingDecision['chosen']): Outcome {
  if (c.skipped) return 'skipped';
  if (chosen && !c.reason && chosen.channel_id === c.channel_id && chosen.key_index === c.key_index && (chosen.route ?? '') === (c.route ?? ''))
    return 'chosen';
  return c.reason ? 'failed' : 'considered';
}

/** How each breakdown line's unit price reads (token lines: per 1M tokens). */
const UNIT_PRICE_KEY: Partial<Record<BreakdownLine['key'], string>> = {
  per_call: 'logs.perCallPrice',
  images: 'pricingUnits.perImagePrice',
  audio: 'pricingUnits.perMinutePrice',
  chars: 'pricingUnits.perMillionCharsPrice',
  searches: 'pricingUnits.perThousandSearchesPrice',
};

/**
 * Everything about one relayed request: both ids, tokens and price breakdown; channel, upstream model and
 * each upstream attempt only when the log carries them (the admin view).
 */
export function LogDetailDrawer({ log, onClose }: { log: UsageLog | null; onClose: () => void }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const breakdown = log ? priceBreakdown(log) : null;

  return (
    <Drawer open={!!log} onClose={onClose} title={t('logs.detailTitle')} size={WIDE_DRAWER} destroyOnHidden>
      {log && breakdown ? (
        <>
          <Descriptions column={1} size="small" bordered data-testid="log-detail">
            <Descriptions.Item label={t('logs.requestId')}>
              <Typography.Text className="tg-mono" copyable>
                {log.request_id}
              </Typography.Text>
            </Descriptions.Item>
            <Descriptions.Item label={t('logs.clientRequestId')}>
              {log.client_request_id ? (
                <Typography.Text className="tg-mono" copyable data-testid="log-client-request-id">
                  {log.client_request_id}
                </Typography.Text>
              ) : (
                t('common.none')
              )}
            </Descriptions.Item>
            <Descriptions.Item label={t('logs.time')}>{formatTime(log.created_at)}</Descriptions.Item>
            <Descriptions.Item label={t('logs.user')}>{log.username || log.user_id}</Descriptions.Item>
            <Descriptions.Item label={t('logs.key')}>{log.token_name || log.token_id}</Descriptions.Item>
            <Descriptions.Item label={t('logs.model')}>{log.model}</Descriptions.Item>
            {log.group !== undefined ? (
              <Descriptions.Item label={t('logs.group')}>
                <span data-testid="log-group">{log.group || t('common.none')}</span>
              </Descriptions.Item>
            ) : null}
            {log.route !== undefined ? (
              <Descriptions.Item label={t('logs.route')}>
                <span data-testid="log-route">{log.route || t('common.none')}</span>
              </Descriptions.Item>
            ) : null}
            {log.upstream_model !== undefined ? (
              <Descriptions.Item label={t('logs.upstreamModel')}>{log.upstream_model || log.model}</Descriptions.Item>
            ) : null}
            {log.channel_id !== undefined || log.channel_name ? (
              <Descriptions.Item label={t('logs.channel')}>{log.channel_name || log.channel_id || t('common.none')}</Descriptions.Item>
            ) : null}
            {log.client_protocol ? (
              <Descriptions.Item label={t('logs.protocol')}>
                <Typography.Text className="tg-mono">
                  {log.upstream_protocol && log.upstream_protocol !== log.client_protocol
                    ? t('logs.protocolTranslated', { client: log.client_protocol, upstream: log.upstream_protocol })
                    : log.client_protocol}
                </Typography.Text>
              </Descriptions.Item>
            ) : null}
            <Descriptions.Item label={t('logs.stream')}>{log.stream ? t('common.yes') : t('common.no')}</Descriptions.Item>
            <Descriptions.Item label={t('common.status')}>
              <Tag color={log.status === 'success' ? 'success' : 'error'}>{t(`logs.status_${log.status}`)}</Tag>
              {log.http_status ? <Tag>{log.http_status}</Tag> : null}
              {log.error_class ? (
                <Tag color="warning" title={log.error_class}>
                  {t(`logs.errorClass.${log.error_class}`, { defaultValue: log.error_class })}
                </Tag>
              ) : null}
            </Descriptions.Item>
            {log.error_code ? (
              <Descriptions.Item label={t('logs.errorCode')}>
                <Typography.Text className="tg-mono">{log.error_code}</Typography.Text>
              </Descriptions.Item>
            ) : null}
            {log.error ? <Descriptions.Item label={t('logs.error')}>{log.error}</Descriptions.Item> : null}
            <Descriptions.Item label={t('logs.latency')}>{fmt.duration(log.elapsed_ms)}</Descriptions.Item>
            <Descriptions.Item label={t('logs.firstByte')}>{fmt.duration(log.first_byte_ms)}</Descriptions.Item>
            <Descriptions.Item label={t('logs.clientIp')}>{log.client_ip}</Descriptions.Item>
          </Descriptions>

          <Typography.Title level={5} style={{ marginTop: 24 }}>
            {t('logs.priceBreakdown')}
          </Typography.Title>
          <Table<BreakdownLine>
            size="small"
            rowKey="key"
            pagination={false}
            dataSource={breakdown.lines}
            columns={[
              { title: t('logs.item'), dataIndex: 'key', render: (key: string) => t(`logs.price_${key}`) },
              { title: t('logs.tokens'), dataIndex: 'tokens', render: (v: number | null) => (v === null ? '' : fmt.number(v)) },
              {
                title: t('logs.unitPrice'),
                dataIndex: 'price',
                render: (v: string, line) => t(UNIT_PRICE_KEY[line.key] ?? 'logs.perMillion', { price: fmt.price(v) }),
              },
              { title: t('logs.amount'), dataIndex: 'units', render: (v: number) => fmt.money(v) },
            ]}
            summary={() => (
              <>
                <Table.Summary.Row>
                  <Table.Summary.Cell index={0} colSpan={3}>
                    {t('logs.groupRatio')}
                  </Table.Summary.Cell>
                  <Table.Summary.Cell index={1}>{`×${log.group_ratio || '1'}`}</Table.Summary.Cell>
                </Table.Summary.Row>
                <Table.Summary.Row>
                  <Table.Summary.Cell index={0} colSpan={3}>
                    <Typography.Text strong>{t('logs.cost')}</Typography.Text>
                  </Table.Summary.Cell>
                  <Table.Summary.Cell index={1}>
                    <Typography.Text strong data-testid="log-detail-cost">
                      {fmt.money(log.cost)}
                    </Typography.Text>
                  </Table.Summary.Cell>
                </Table.Summary.Row>
                {log.upstream_cost !== undefined ? (
                  <>
                    <Table.Summary.Row>
                      <Table.Summary.Cell index={0} colSpan={3}>
                        {t('business.upstreamCost')}
                      </Table.Summary.Cell>
                      <Table.Summary.Cell index={1}>
                        <span data-testid="log-detail-upstream-cost">{fmt.money(log.upstream_cost)}</span>
                      </Table.Summary.Cell>
                    </Table.Summary.Row>
                    <Table.Summary.Row>
                      <Table.Summary.Cell index={0} colSpan={3}>
                        {t('business.profit')}
                      </Table.Summary.Cell>
                      <Table.Summary.Cell index={1}>
                        <span data-testid="log-detail-profit">{fmt.money(log.cost - log.upstream_cost)}</span>
                      </Table.Summary.Cell>
                    </Table.Summary.Row>
                  </>
                ) : null}
              </>
            )}
          />

          {log.decision ? (
            <>
              <Typography.Title level={5} style={{ marginTop: 24 }}>
                {t('logs.decision')}
              </Typography.Title>
              <Descriptions column={1} size="small" bordered data-testid="log-decision">
                <Descriptions.Item label={t('logs.decisionPolicy')}>
                  <Typography.Text className="tg-mono">{log.decision.policy || t('common.none')}</Typography.Text>
                </Descriptions.Item>
                {log.decision.sticky ? (
                  <Descriptions.Item label={t('logs.decisionSticky')}>
                    {stickyText(log.decision.sticky, t)}
                  </Descriptions.Item>
                ) : null}
                <Descriptions.Item label={t('logs.decisionChosen')}>
                  <span data-testid="log-decision-chosen">
                    {log.decision.chosen
                      ? t('logs.decisionTarget', {
                          group: log.decision.chosen.group || log.group || t('common.none'),
                          route: log.decision.chosen.route || t('common.none'),
                          channel: log.decision.chosen.channel_id,
                          key: log.decision.chosen.key_index,
                        })
                      : t('logs.decisionNone')}
                  </span>
                </Descriptions.Item>
              </Descriptions>
              <Typography.Paragraph style={{ marginTop: 8 }}>
                <Link to={`/console/admin/routing/decisions?request_id=${encodeURIComponent(log.request_id)}`} data-testid="log-decision-link">
                  {t('routing.openDecision')}
                </Link>
              </Typography.Paragraph>
              {log.decision.truncated ? (
                <Typography.Paragraph type="secondary" style={{ marginTop: 8 }}>
                  {t('logs.decisionTruncated')}
                </Typography.Paragraph>
              ) : null}
              <Table<RoutingCandidate & { n: number }>
                size="small"
                rowKey="n"
                pagination={false}
                style={{ marginTop: 12 }}
                scroll={{ x: 'max-content' }}
                locale={{ emptyText: t('logs.noCandidates') }}
                dataSource={(log.decision.considered ?? []).map((c, n) => ({ ...c, n: n + 1 }))}
                columns={[
                  { title: t('logs.attemptNo'), dataIndex: 'n' },
                  { title: t('logs.group'), dataIndex: 'group', render: (v?: string) => v || t('common.none') },
                  { title: t('logs.route'), dataIndex: 'route', render: (v?: string) => v || t('common.none') },
                  { title: t('logs.channel'), dataIndex: 'channel_id' },
                  { title: t('logs.keyIndex'), dataIndex: 'key_index', render: (v?: number) => v ?? t('common.none') },
                  {
                    title: t('logs.result'),
                    key: 'outcome',
                    render: (_, c) => {
                      const outcome = candidateOutcome(c, log.decision?.chosen);
                      return (
                        <Tag color={OUTCOME_COLORS[outcome]} data-testid="candidate-outcome">
                          {t(`logs.candidate_${outcome}`)}
                        </Tag>
                      );
                    },
                  },
                  {
                    title: t('logs.candidateReason'),
                    dataIndex: 'reason',
                    render: (v?: string) => (v ? t(`logs.reason_${v}`, { defaultValue: v }) : t('common.none')),
                  },
                ]}
              />
            </>
          ) : null}

          {log.attempts !== undefined ? (
            <>
              <Typography.Title level={5} style={{ marginTop: 24 }}>
                {t('logs.attempts')}
              </Typography.Title>
              <Table<LogAttempt & { n: number }>
                size="small"
                rowKey="n"
                pagination={false}
                locale={{ emptyText: t('logs.noAttempts') }}
                dataSource={(log.attempts ?? []).map((a, n) => ({ ...a, n: n + 1 }))}
                columns={[
                  { title: t('logs.attemptNo'), dataIndex: 'n' },
                  { title: t('logs.channel'), dataIndex: 'channel_id' },
                  { title: t('logs.keyIndex'), dataIndex: 'key_index' },
                  {
                    title: t('logs.result'),
                    dataIndex: 'class',
                    render: (c: string) => <Tag color={!c || c === 'success' ? 'success' : 'warning'}>{c || t('logs.status_success')}</Tag>,
                  },
                  { title: t('logs.httpStatus'), dataIndex: 'status', render: (v?: number) => v || t('common.none') },
                  { title: t('logs.latency'), dataIndex: 'latency_ms', render: (v: number) => fmt.duration(v) },
                ]}
              />
            </>
          ) : null}
        </>
      ) : null}
    </Drawer>
  );
}
