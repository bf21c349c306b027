import { Space, Switch, Tag, Tooltip } from 'antd';
import { useTranslation } from 'react-i18next';
import type { Token } from '../api/types';

/**
 * The status cell of a key in both key pages: the on/off switch, and a mark when an administrator disabled
 * the key. The owner's switch is locked then (the server refuses the owner's enable); an admin's stays live.
 */
export function KeyStatus({
  token,
  lockedForOwner,
  onChange,
}: {
  token: Token;
  lockedForOwner: boolean;
  onChange: (enabled: boolean) => void;
}) {
  const { t } = useTranslation();
  return (
    <Space size={4} wrap>
      <Switch
        size="small"
        checked={token.status === 'enabled'}
        disabled={lockedForOwner && token.admin_disabled}
        aria-label={t('keys.toggleStatus')}
        onChange={onChange}
      />
      {token.admin_disabled && (
        <Tooltip title={t('keys.adminDisabledHint')}>
          <Tag color="error" data-testid="key-admin-disabled">
            {t('keys.adminDisabled')}
          </Tag>
        </Tooltip>
      )}
    </Space>
  );
}

/** The group cell of a key: its group (or the owner's), marked when the owner may no longer use it. */
export function KeyGroup({ token }: { token: Token }) {
  const { t } = useTranslation();
  if (!token.group) return <>{t('keys.ownGroup')}</>;
  if (!token.group_revoked) return <>{token.group}</>;
  return (
    <Tooltip title={t('keys.groupRevokedHint', { group: token.group })}>
      <Space size={4} wrap>
        <span>{token.group}</span>
        <Tag color="warning" data-testid="key-group-revoked">
          {t('keys.groupRevoked')}
        </Tag>
      </Space>
    </Tooltip>
  );
}
