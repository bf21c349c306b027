import { MoonOutlined, SunOutlined } from '@ant-design/icons';
import { Button, Tooltip } from 'antd';
import { useTranslation } from 'react-i18next';
import { useThemeMode } from '../theme/ThemeMode';

/** Header button that flips between light and dark mode. */
export function ThemeToggle() {
  const { mode, toggle } = useThemeMode();
  const { t } = useTranslation();
  const label = mode === 'dark' ? t('header.lightMode') : t('header.darkMode');
  return (
    <Tooltip title={label}>
      <Button
        type="text"
        aria-label={label}
        data-testid="theme-toggle"
        icon={mode === 'dark' ? <SunOutlined /> : <MoonOutlined />}
        onClick={toggle}
      />
    </Tooltip>
  );
}
