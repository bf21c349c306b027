import { GlobalOutlined } from '@ant-design/icons';
import { Select } from 'antd';
import { useTranslation } from 'react-i18next';
import { changeLanguage, LANGUAGES, type Language } from '../i18n';

/** Header control that switches the UI language (and remembers it). */
export function LanguageSwitch() {
  const { i18n, t } = useTranslation();
  return (
    <Select
      data-testid="language-switch"
      aria-label={t('header.language')}
      size="middle"
      variant="borderless"
      value={i18n.language as Language}
      onChange={(lng) => void changeLanguage(lng)}
      suffixIcon={<GlobalOutlined />}
      popupMatchSelectWidth={false}
      options={LANGUAGES.map((l) => ({ value: l.code, label: l.label }))}
    />
  );
}
