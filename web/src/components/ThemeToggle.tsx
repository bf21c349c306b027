import { MoonOutlined, SunOutlined } from '@ant-design/icons';
import { Button } from 'antd';
import { useTranslation } from 'react-i18next';
import { useThemeMode } from '../theme/ThemeMode';

/**
 * Header button that flips between light and dark mode. Its hint is the native title, not antd's Tooltip: the
 * sign-in page shows this button, and Tooltip's popup machinery is ~25 KB (brotli) it would load for it alone.
 */
export function ThemeToggle() {
  const { mode, toggle } = useThemeMode();
  const { t } = useTranslation();
  const label = mode === 'dark' ? t('header.lightMode') : t('header.darkMode');
  return (
    <Button
      type="text"
      aria-label={label}
      title={label}
      data-testid="theme-toggle"
      icon={mode === 'dark' ? <SunOutlined /> : <MoonOutlined />}
      onClick={toggle}
    />
  );
}
