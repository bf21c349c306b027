import { Flex, Progress, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import type { Token } from '../api/types';
import { useFormat } from '../lib/useFormat';

/** Today's and this month's spend of a key, against its budgets when it has them. */
export function KeyBudget({ token }: { token: Token }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const line = (label: string, spent: number | undefined, budget: number | undefined, testId: string) => (
    <Flex vertical gap={0} data-testid={testId}>
      <Typography.Text type="secondary" style={{ fontSize: 12 }}>
        {budget ? t('keys.spentOfBudget', { label, spent: fmt.money(spent), budget: fmt.money(budget) }) : t('keys.spentNoBudget', { label, spent: fmt.money(spent) })}
      </Typography.Text>
      {budget ? (
        <Progress
          size="small"
          showInfo={false}
          percent={Math.min(100, ((spent ?? 0) / budget) * 100)}
          status={(spent ?? 0) >= budget ? 'exception' : 'normal'}
          aria-label={label}
        />
      ) : null}
    </Flex>
  );
  return (
    <Flex vertical gap={2} style={{ minWidth: 160 }}>
      {line(t('keys.today'), token.spent_today, token.daily_budget, 'key-spent-today')}
      {line(t('keys.thisMonth'), token.spent_month, token.monthly_budget, 'key-spent-month')}
    </Flex>
  );
}
