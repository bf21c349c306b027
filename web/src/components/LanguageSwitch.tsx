import { GlobalOutlined } from '@ant-design/icons';
import { theme } from 'antd';
import { useTranslation } from 'react-i18next';
import { changeLanguage, LANGUAGES, type Language } from '../i18n';

/**
 * Header control that switches the UI language (and remembers it). A native <select> drawn with antd's theme
 * tokens: antd's Select (virtual list, trigger) was 25 KB of the sign-in page's first load.
 */
export function LanguageSwitch() {
  const { i18n, t } = useTranslation();
  const { token } = theme.useToken();
  return (
    <span style={{ display: 'inline-flex', alignItems: 'center', gap: 4, color: token.colorText }}>
      <GlobalOutlined aria-hidden style={{ color: token.colorTextSecondary }} />
      <select
        data-testid="language-switch"
        aria-label={t('header.language')}
        value={i18n.language as Language}
        onChange={(e) => void changeLanguage(e.target.value as Language)}
        style={{
          appearance: 'auto',
          background: 'transparent',
          color: token.colorText,
          border: 'none',
          borderRadius: token.borderRadius,
          fontSize: token.fontSize,
          fontFamily: 'inherit',
          height: token.controlHeight,
          padding: `0 ${token.paddingXXS}px`,
          cursor: 'pointer',
        }}
      >
        {LANGUAGES.map((l) => (
          <option key={l.code} value={l.code} style={{ background: token.colorBgElevated, color: token.colorText }}>
            {l.label}
          </option>
        ))}
      </select>
    </span>
  );
}
