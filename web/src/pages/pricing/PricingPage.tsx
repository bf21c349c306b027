import { Descriptions, Input, Select, Space, Table, Typography, type TableProps } from 'antd';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useUserGroups } from '../../api/auth';
import { usePricingFor } from '../../api/pricing';
import type { EffectivePrice } from '../../api/types';
import { useSession } from '../../auth/SessionProvider';
import { PageHeader } from '../../components/PageHeader';
import { QueryError } from '../../components/QueryError';
import { useFormat } from '../../lib/useFormat';

/** What the caller pays per model: list price × the group's ratio × their tier's ratio, for a group they may use. */
export default function PricingPage() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { user } = useSession();
  const groups = useUserGroups();
  const [group, setGroup] = useState<string | undefined>();
  const [text, setText] = useState('');
  const [q, setQ] = useState('');
  useEffect(() => {
    const id = setTimeout(() => setQ(text.trim()), 250);
    return () => clearTimeout(id);
  }, [text]);
  const pricing = usePricingFor({ group, q });
  const rows = pricing.data ?? [];
  const first = rows[0];
  const perCall = (row: EffectivePrice) => Number(row.per_call || 0) !== 0;
  const tokenPrice = (field: 'input' | 'output' | 'cache_read' | 'cache_write') => (_: unknown, r: EffectivePrice) =>
    perCall(r) ? t('common.none') : <span data-testid={`price-${field}-${r.model}`}>{fmt.price(r[field])}</span>;

  const columns: TableProps<EffectivePrice>['columns'] = [
    {
      title: t('pricing.model'),
      dataIndex: 'model',
      key: 'model',
      sorter: (a, b) => a.model.localeCompare(b.model),
      render: (m: string) => <Typography.Text copyable>{m}</Typography.Text>,
    },
    { title: t('pricing.input'), key: 'input', render: tokenPrice('input') },
    { title: t('pricing.output'), key: 'output', render: tokenPrice('output') },
    { title: t('pricing.cacheRead'), key: 'cache_read', responsive: ['md'], render: tokenPrice('cache_read') },
    { title: t('pricing.cacheWrite'), key: 'cache_write', responsive: ['md'], render: tokenPrice('cache_write') },
    {
      title: t('pricing.perCall'),
      key: 'per_call',
      render: (_, r) => (perCall(r) ? <span data-testid={`price-per_call-${r.model}`}>{fmt.price(r.per_call)}</span> : t('common.none')),
    },
  ];

  // Units beyond tokens, one line each, only where the model has them.
  const otherUnits = (r: EffectivePrice) => {
    const lines: string[] = [];
    if (r.per_image) lines.push(t('pricingUnits.perImagePrice', { price: fmt.price(r.per_image) }));
    for (const [size, price] of Object.entries(r.per_image_by_size ?? {})) lines.push(t('pricingUnits.sizePrice', { size, price: fmt.price(price) }));
    if (r.per_audio_minute) lines.push(t('pricingUnits.perMinutePrice', { price: fmt.price(r.per_audio_minute) }));
    if (r.per_1m_chars) lines.push(t('pricingUnits.perMillionCharsPrice', { price: fmt.price(r.per_1m_chars) }));
    if (r.per_1k_searches) lines.push(t('pricingUnits.perThousandSearchesPrice', { price: fmt.price(r.per_1k_searches) }));
    for (const tier of r.tiers ?? [])
      lines.push(t('pricingUnits.tierPrice', { tokens: fmt.number(tier.above_prompt_tokens), input: fmt.price(tier.input), output: fmt.price(tier.output) }));
    return lines.length ? (
      <Space direction="vertical" size={0} data-testid={`price-units-${r.model}`}>
        {lines.map((l) => (
          <span key={l}>{l}</span>
        ))}
      </Space>
    ) : (
      t('common.none')
    );
  };
  columns.push({ title: t('pricingUnits.otherUnits'), key: 'units', render: (_, r) => otherUnits(r) });

  const groupOptions = (groups.data ?? []).map((g) => ({
    value: g.name,
    label: t('pricing.groupOption', { name: g.display_name || g.name, ratio: g.ratio || '1' }),
  }));
  const currentGroup = group ?? first?.group ?? user?.group;

  return (
    <>
      <PageHeader
        title={t('pricing.title')}
        extra={
          <Space wrap>
            <Select
              style={{ minWidth: 200 }}
              value={currentGroup}
              onChange={setGroup}
              options={groupOptions}
              loading={groups.isPending}
              placeholder={t('pricing.group')}
              aria-label={t('pricing.group')}
              data-testid="pricing-group"
            />
            <Input.Search
              allowClear
              placeholder={t('pricing.search')}
              aria-label={t('pricing.search')}
              value={text}
              onChange={(e) => setText(e.target.value)}
              onSearch={(v) => setQ(v.trim())}
              style={{ width: 220 }}
              data-testid="pricing-search"
            />
          </Space>
        }
      />
      <Typography.Paragraph type="secondary">{t('pricing.hintPays')}</Typography.Paragraph>
      {first ? (
        <Descriptions size="small" column={{ xs: 1, md: 3 }} style={{ marginBottom: 16 }} data-testid="pricing-ratios">
          <Descriptions.Item label={t('pricing.group')}>{t('pricing.ratioOf', { name: first.group || currentGroup, ratio: first.group_ratio || '1' })}</Descriptions.Item>
          <Descriptions.Item label={t('pricing.tier')}>
            {t('pricing.ratioOf', { name: first.tier || t('pricing.noTier'), ratio: first.tier_ratio || '1' })}
          </Descriptions.Item>
          <Descriptions.Item label={t('pricing.totalRatio')}>{`×${first.ratio || first.group_ratio || '1'}`}</Descriptions.Item>
        </Descriptions>
      ) : null}
      {pricing.error ? <QueryError error={pricing.error} onRetry={() => void pricing.refetch()} /> : null}
      <Table<EffectivePrice>
        rowKey="model"
        columns={columns}
        dataSource={pricing.error ? [] : rows}
        loading={pricing.isPending || pricing.isFetching}
        scroll={{ x: 'max-content' }}
        locale={{ emptyText: pricing.error ? t('common.loadFailed') : t('pricing.empty') }}
        pagination={{ pageSize: 50, hideOnSinglePage: true }}
      />
    </>
  );
}
