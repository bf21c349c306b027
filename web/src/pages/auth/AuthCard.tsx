import { Flex, theme, Typography } from 'antd';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { useSiteStatus } from '../../api/auth';
import { LanguageSwitch } from '../../components/LanguageSwitch';
import { ThemeToggle } from '../../components/ThemeToggle';

/**
 * The frame of the sign-in and sign-up pages. The panel is drawn with antd Card's own tokens (background,
 * border, radius, padding) rather than with Card: Card imports Tabs, which brings Dropdown and Menu, about
 * 35 KB (brotli) that the sign-in page would download and never use. The page is a div with Layout's background
 * for the same reason (Layout brings Sider and its trigger).
 */
export function AuthCard({ title, children }: { title: string; children: ReactNode }) {
  const { t } = useTranslation();
  const { token } = theme.useToken();
  const status = useSiteStatus();
  return (
    // The text defaults antd's App gives the console (the sign-in page goes without App, see Feedback).
    <div
      style={{
        display: 'flex',
        flexDirection: 'column',
        minHeight: '100vh',
        background: token.colorBgLayout,
        color: token.colorText,
        fontFamily: token.fontFamily,
        fontSize: token.fontSize,
        lineHeight: token.lineHeight,
      }}
    >
      <Flex justify="flex-end" gap={4} style={{ padding: 12 }}>
        <LanguageSwitch />
        <ThemeToggle />
      </Flex>
      <Flex justify="center" align="flex-start" style={{ padding: '4vh 12px' }}>
        <div
          style={{
            width: '100%',
            maxWidth: 400,
            boxSizing: 'border-box',
            padding: token.paddingLG,
            background: token.colorBgContainer,
            border: `${token.lineWidth}px ${token.lineType} ${token.colorBorderSecondary}`,
            borderRadius: token.borderRadiusLG,
          }}
        >
          <Typography.Title level={1} style={{ textAlign: 'center', marginTop: 0, fontSize: 30 }}>
            {status.data?.site_name || t('app.name')}
          </Typography.Title>
          <Typography.Paragraph type="secondary" style={{ textAlign: 'center' }}>
            {title}
          </Typography.Paragraph>
          {children}
        </div>
      </Flex>
    </div>
  );
}
