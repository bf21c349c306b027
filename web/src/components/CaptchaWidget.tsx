import { Typography } from 'antd';
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { CaptchaStatus } from '../api/types';

/** The providers' explicit-render scripts; loaded only when a captcha is configured. */
const SCRIPTS: Record<CaptchaStatus['provider'], { src: string; global: 'turnstile' | 'hcaptcha' }> = {
  turnstile: { src: 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit', global: 'turnstile' },
  hcaptcha: { src: 'https://js.hcaptcha.com/1/api.js?render=explicit', global: 'hcaptcha' },
};

interface RenderApi {
  render: (el: HTMLElement, opts: Record<string, unknown>) => string | number;
  remove?: (id: string | number) => void;
  reset?: (id?: string | number) => void;
}

const loading = new Map<string, Promise<void>>();

function loadScript(src: string): Promise<void> {
  let p = loading.get(src);
  if (!p) {
    p = new Promise<void>((resolve, reject) => {
      const s = document.createElement('script');
      s.src = src;
      s.async = true;
      s.onload = () => resolve();
      s.onerror = () => {
        loading.delete(src);
        reject(new Error(`failed to load ${src}`));
      };
      document.head.appendChild(s);
    });
    loading.set(src, p);
  }
  return p;
}

/**
 * Turnstile or hCaptcha, rendered explicitly from the provider's own script. onToken gets the token when the
 * visitor passes and '' when it expires or fails. Renders nothing when no captcha is configured.
 */
export function CaptchaWidget({ captcha, onToken }: { captcha?: CaptchaStatus | null; onToken: (token: string) => void }) {
  const { t } = useTranslation();
  const el = useRef<HTMLDivElement>(null);
  const [ready, setReady] = useState(false);
  const cb = useRef(onToken);
  cb.current = onToken;

  useEffect(() => {
    if (!captcha || !el.current) return;
    const { src, global } = SCRIPTS[captcha.provider];
    let id: string | number | undefined;
    let gone = false;
    void loadScript(src)
      .then(() => {
        const w = window as unknown as Record<string, RenderApi | undefined>;
        const lib = w[global];
        if (gone || !lib || !el.current) return;
        id = lib.render(el.current, {
          sitekey: captcha.site_key,
          callback: (token: string) => cb.current(token),
          'expired-callback': () => cb.current(''),
          'error-callback': () => cb.current(''),
        });
        setReady(true);
      })
      .catch(() => setReady(false));
    return () => {
      gone = true;
      const w = window as unknown as Record<string, RenderApi | undefined>;
      if (id !== undefined) w[global]?.remove?.(id);
    };
  }, [captcha]);

  if (!captcha) return null;
  return (
    <div style={{ marginBottom: 16 }} data-testid="captcha">
      <div ref={el} />
      {!ready ? <Typography.Text type="secondary">{t('signin.captchaLoading')}</Typography.Text> : null}
    </div>
  );
}
