import { Tag } from 'antd';
import { useTranslation } from 'react-i18next';

const COLORS: Record<string, string> = { paid: 'success', pending: 'processing', failed: 'error', expired: 'default' };

/** A top-up order's status as a coloured tag. */
export function OrderStatus({ status }: { status: string }) {
  const { t } = useTranslation();
  return (
    <Tag color={COLORS[status] ?? 'default'} data-testid="order-status">
      {t(`orders.status_${status}`, { defaultValue: status })}
    </Tag>
  );
}
