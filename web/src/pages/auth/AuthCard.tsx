import { Card, Flex, Layout, Typography } from 'antd';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { useSiteStatus } from '../../api/auth';
import { LanguageSwitch } from '../../components/LanguageSwitch';
import { ThemeToggle } from '../../components/ThemeToggle';

/** The frame of the sign-in and sign-up pages. */
export function AuthCard({ title, children }: { title: string; children: ReactNode }) {
  const { t } = useTranslation();
  const status = useSiteStatus();
  return (
    <Layout style={{ minHeight: '100vh' }}>
      <Flex justify="flex-end" gap={4} style={{ padding: 12 }}>
        <LanguageSwitch />
        <ThemeToggle />
      </Flex>
      <Flex justify="center" align="flex-start" style={{ padding: '4vh 12px' }}>
        <Card style={{ width: '100%', maxWidth: 400 }}>
          <Typography.Title level={1} style={{ textAlign: 'center', marginTop: 0, fontSize: 30 }}>
            {status.data?.site_name || t('app.name')}
          </Typography.Title>
          <Typography.Paragraph type="secondary" style={{ textAlign: 'center' }}>
            {title}
          </Typography.Paragraph>
          {children}
        </Card>
      </Flex>
    </Layout>
  );
}
