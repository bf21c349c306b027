import { CopyOutlined, DownloadOutlined } from '@ant-design/icons';
import { Alert, App, Button, Input, Modal } from 'antd';
import { useTranslation } from 'react-i18next';
import type { CreatedBatch } from '../../../api/types';
import { copyText } from '../../wallet/InviteCard';

/** Shows a new batch's codes in clear, once, with "copy all" and the CSV export. */
export function BatchCodesModal({
  created,
  onClose,
  onExport,
}: {
  created: CreatedBatch | null;
  onClose: () => void;
  onExport: (batch: string) => void;
}) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const codes = created?.codes ?? [];
  const text = codes.join('\n');

  return (
    <Modal
      open={!!created}
      title={t('redemptions.createdTitle', { count: codes.length })}
      onCancel={onClose}
      footer={[
        <Button key="export" icon={<DownloadOutlined />} onClick={() => created && onExport(created.batch)} data-testid="batch-export">
          {t('redemptions.exportCsv')}
        </Button>,
        <Button
          key="copy"
          icon={<CopyOutlined />}
          onClick={() => void copyText(text).then((ok) => (ok ? message.success(t('common.copied')) : message.error(t('wallet.copyFailed'))))}
          data-testid="batch-copy-all"
        >
          {t('redemptions.copyAll')}
        </Button>,
        <Button key="done" type="primary" onClick={onClose}>
          {t('common.done')}
        </Button>,
      ]}
    >
      <Alert type="warning" showIcon title={t('redemptions.shownOnce')} style={{ marginBottom: 12 }} />
      <Input.TextArea
        readOnly
        value={text}
        autoSize={{ minRows: 4, maxRows: 14 }}
        className="tg-mono"
        aria-label={t('redemptions.codes')}
        data-testid="batch-codes"
      />
    </Modal>
  );
}
