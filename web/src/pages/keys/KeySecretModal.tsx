import { Alert, Modal, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { QuickStart } from '../connect/QuickStart';

/** Shows a key in clear with a copy button: after creation (once) or after reveal. */
export function KeySecretModal({ secret, created, onClose }: { secret: string | null; created: boolean; onClose: () => void }) {
  const { t } = useTranslation();
  return (
    <Modal
      open={!!secret}
      title={created ? t('keys.createdTitle') : t('keys.revealTitle')}
      onCancel={onClose}
      onOk={onClose}
      okText={t('common.done')}
      cancelButtonProps={{ style: { display: 'none' } }}
      destroyOnHidden
      width={760}
    >
      {created ? <Alert type="warning" showIcon title={t('keys.createdHint')} style={{ marginBottom: 16 }} /> : null}
      <Typography.Paragraph
        className="tg-mono"
        copyable={{ text: secret ?? '', tooltips: [t('common.copy'), t('common.copied')] }}
        data-testid="key-secret"
        style={{ fontSize: 15 }}
      >
        {secret}
      </Typography.Paragraph>
      {secret ? <QuickStart apiKey={secret} bordered={false} /> : null}
    </Modal>
  );
}
