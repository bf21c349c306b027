import { Alert, Input, Modal, Typography } from 'antd';
import { useCallback, useRef, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError } from '../api/client';

/** Thrown by `run` when the user closes the step-up dialog without a code. */
export class StepUpCancelled extends Error {
  constructor() {
    super('step-up cancelled');
    this.name = 'StepUpCancelled';
  }
}

const needsCode = (err: unknown) => err instanceof ApiError && err.status === 403 && err.code === 'totp_required';

interface Pending {
  call: (code: string) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * Step-up for sensitive actions (revealing a key, a new password or e-mail, channel keys): `run(call)` calls
 * `call()` and, when the server answers 403 totp_required, asks for a fresh two-factor code in a dialog and
 * calls `call(code)` again (a wrong code keeps the dialog open with the server's message). Render `modal`.
 */
export function useStepUp(): { run: <T>(call: (code?: string) => Promise<T>) => Promise<T>; modal: ReactNode } {
  const { t } = useTranslation();
  const pending = useRef<Pending | null>(null);
  const [open, setOpen] = useState(false);
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const run = useCallback(<T,>(call: (code?: string) => Promise<T>): Promise<T> => {
    return call().catch((err: unknown) => {
      if (!needsCode(err)) throw err;
      return new Promise<T>((resolve, reject) => {
        pending.current = { call, resolve: resolve as (v: unknown) => void, reject };
        setCode('');
        setError(null);
        setOpen(true);
      });
    });
  }, []);

  const submit = async () => {
    const p = pending.current;
    if (!p || !code.trim()) return;
    setBusy(true);
    try {
      const value = await p.call(code.trim());
      pending.current = null;
      setOpen(false);
      p.resolve(value);
    } catch (err) {
      if (err instanceof ApiError && (err.code === 'totp_invalid' || err.code === 'totp_delayed' || needsCode(err))) {
        setError(err.message);
        setCode('');
      } else {
        pending.current = null;
        setOpen(false);
        p.reject(err);
      }
    } finally {
      setBusy(false);
    }
  };

  const cancel = () => {
    pending.current?.reject(new StepUpCancelled());
    pending.current = null;
    setOpen(false);
  };

  const modal = (
    <Modal
      open={open}
      title={t('security.stepUpTitle')}
      okText={t('security.confirm')}
      onOk={() => void submit()}
      onCancel={cancel}
      confirmLoading={busy}
      okButtonProps={{ disabled: !code.trim() }}
      destroyOnHidden
    >
      <Typography.Paragraph>{t('security.stepUpHint')}</Typography.Paragraph>
      {error ? <Alert type="error" showIcon title={error} style={{ marginBottom: 12 }} /> : null}
      <Input
        aria-label={t('security.code')}
        value={code}
        onChange={(e) => setCode(e.target.value)}
        onPressEnter={() => void submit()}
        autoComplete="one-time-code"
        inputMode="numeric"
        autoFocus
        maxLength={32}
      />
    </Modal>
  );
  return { run, modal };
}
