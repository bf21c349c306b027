import {
  AlertOutlined,
  ApiOutlined,
  AuditOutlined,
  BarChartOutlined,
  ClusterOutlined,
  DashboardOutlined,
  FundOutlined,
  DollarOutlined,
  ExperimentOutlined,
  KeyOutlined,
  LogoutOutlined,
  MenuFoldOutlined,
  MenuUnfoldOutlined,
  ProfileOutlined,
  SafetyOutlined,
  SettingOutlined,
  TagsOutlined,
  TeamOutlined,
  UnorderedListOutlined,
  UserOutlined,
  WalletOutlined,
  GiftOutlined,
  ShoppingCartOutlined,
  CreditCardOutlined,
  CrownOutlined,
  BranchesOutlined,
  NodeIndexOutlined,
  PartitionOutlined,
} from '@ant-design/icons';
import { Alert, Button, Dropdown, Flex, Grid, Layout, Menu, Typography, theme, type MenuProps } from 'antd';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Outlet, useLocation, useNavigate } from 'react-router';
import { logout, useSiteStatus } from '../api/auth';
import { useSession } from '../auth/SessionProvider';
import { LanguageSwitch } from './LanguageSwitch';
import { ThemeToggle } from './ThemeToggle';
import { useFormat } from '../lib/useFormat';
import { useTableA11yPatches } from './a11yPatches';
import { Feedback } from './Feedback';

const { Header, Sider, Content } = Layout;

/** The console frame: navigation by role, header controls, and the page. */
export function AppLayout() {
  const { t } = useTranslation();
  const { user, isAdmin } = useSession();
  const navigate = useNavigate();
  const location = useLocation();
  const screens = Grid.useBreakpoint();
  const isMobile = !screens.lg;
  const [collapsed, setCollapsed] = useState<boolean | null>(null);
  const siderCollapsed = collapsed ?? isMobile;
  const status = useSiteStatus();
  const { token } = theme.useToken();
  const fmt = useFormat();
  useTableA11yPatches();

  const items: MenuProps['items'] = [
    { key: '/console', icon: <DashboardOutlined />, label: t('nav.dashboard') },
    { key: '/console/keys', icon: <KeyOutlined />, label: t('nav.keys') },
    { key: '/console/logs', icon: <UnorderedListOutlined />, label: t('nav.logs') },
    { key: '/console/playground', icon: <ExperimentOutlined />, label: t('nav.playground') },
    { key: '/console/wallet', icon: <WalletOutlined />, label: t('nav.wallet') },
    { key: '/console/pricing', icon: <DollarOutlined />, label: t('nav.pricing') },
    { key: '/console/routing', icon: <NodeIndexOutlined />, label: t('nav.routingSim') },
    { key: '/console/profile', icon: <UserOutlined />, label: t('nav.profile') },
  ];
  if (isAdmin) {
    items.push({
      key: 'admin',
      type: 'group',
      label: t('nav.admin'),
      children: [
        { key: '/console/admin/business', icon: <FundOutlined />, label: t('nav.business') },
        { key: '/console/admin/channels', icon: <ApiOutlined />, label: t('nav.channels') },
        { key: '/console/admin/users', icon: <TeamOutlined />, label: t('nav.users') },
        { key: '/console/admin/keys', icon: <SafetyOutlined />, label: t('nav.allKeys') },
        { key: '/console/admin/groups', icon: <ClusterOutlined />, label: t('nav.groups') },
        { key: '/console/admin/tiers', icon: <CrownOutlined />, label: t('nav.tiers') },
        { key: '/console/admin/routing', icon: <BranchesOutlined />, label: t('nav.routingConfig') },
        { key: '/console/admin/routing/decisions', icon: <PartitionOutlined />, label: t('nav.routingDecisions') },
        { key: '/console/admin/pricing', icon: <TagsOutlined />, label: t('nav.modelPricing') },
        { key: '/console/admin/logs', icon: <BarChartOutlined />, label: t('nav.allLogs') },
        { key: '/console/admin/orders', icon: <ShoppingCartOutlined />, label: t('nav.orders') },
        { key: '/console/admin/redemptions', icon: <GiftOutlined />, label: t('nav.redemptions') },
        { key: '/console/admin/payment', icon: <CreditCardOutlined />, label: t('nav.payment') },
        { key: '/console/admin/settings', icon: <SettingOutlined />, label: t('nav.settings') },
        { key: '/console/admin/alerts', icon: <AlertOutlined />, label: t('nav.alerts') },
        { key: '/console/admin/audit', icon: <AuditOutlined />, label: t('nav.audit') },
      ],
    });
  }
  const selected = location.pathname.replace(/\/$/, '').replace(/\/wallet\/return$/, '/wallet') || '/console';

  const userMenu: MenuProps['items'] = [
    { key: 'profile', icon: <ProfileOutlined />, label: t('nav.profile') },
    { key: 'logout', icon: <LogoutOutlined />, label: t('auth.signOut') },
  ];
  const onUserMenu: MenuProps['onClick'] = ({ key }) => {
    if (key === 'profile') navigate('/console/profile');
    if (key === 'logout') void logout().then(() => navigate('/login', { replace: true }));
  };
  const siteName = status.data?.site_name || t('app.name');
  useEffect(() => {
    document.title = siteName;
  }, [siteName]);

  return (
    <Feedback>
      <Layout style={{ minHeight: '100vh' }}>
        {isMobile && !siderCollapsed ? (
          <div
            aria-hidden
            onClick={() => setCollapsed(true)}
            style={{ position: 'fixed', inset: 0, background: token.colorBgMask, zIndex: 15 }}
          />
        ) : null}
        <Sider
          collapsible
          collapsed={siderCollapsed}
          onCollapse={setCollapsed}
          collapsedWidth={isMobile ? 0 : 64}
          trigger={null}
          width={220}
          theme="light"
          style={{
            borderRight: siderCollapsed && isMobile ? 'none' : `1px solid ${token.colorBorderSecondary}`,
            ...(isMobile ? { position: 'fixed', height: '100vh', zIndex: 20, left: 0, top: 0 } : {}),
          }}
        >
          <Flex align="center" justify="center" style={{ height: 56 }}>
            <Typography.Text strong style={{ fontSize: 18, whiteSpace: 'nowrap' }}>
              {siderCollapsed ? siteName.slice(0, 1) : siteName}
            </Typography.Text>
          </Flex>
          <nav aria-label={t('header.navigation')}>
            <Menu
              mode="inline"
              selectedKeys={[selected]}
              items={items}
              style={{ borderInlineEnd: 0 }}
              onClick={({ key }) => {
                navigate(key);
                if (isMobile) setCollapsed(true);
              }}
            />
          </nav>
        </Sider>
        <Layout>
          <Header
            style={{
              padding: '0 16px',
              background: token.colorBgContainer,
              borderBottom: `1px solid ${token.colorBorderSecondary}`,
              display: 'flex',
              alignItems: 'center',
              justifyContent: 'space-between',
              position: 'sticky',
              top: 0,
              zIndex: 10,
            }}
          >
            <Button
              type="text"
              aria-label={t('header.toggleMenu')}
              icon={siderCollapsed ? <MenuUnfoldOutlined /> : <MenuFoldOutlined />}
              onClick={() => setCollapsed(!siderCollapsed)}
            />
            <Flex align="center" gap={4}>
              <Typography.Text data-testid="header-balance" aria-label={t('dashboard.balance')} style={{ marginInlineEnd: 8, whiteSpace: 'nowrap' }}>
                <WalletOutlined aria-hidden /> {fmt.money(user?.quota)}
              </Typography.Text>
              <LanguageSwitch />
              <ThemeToggle />
              <Dropdown menu={{ items: userMenu, onClick: onUserMenu }} trigger={['click']}>
                <Button type="text" icon={<UserOutlined />} data-testid="user-menu">
                  {isMobile ? null : user?.username}
                </Button>
              </Dropdown>
            </Flex>
          </Header>
          <Content style={{ padding: isMobile ? 12 : 24, minWidth: 0 }}>
            {status.data?.notice ? (
              <Alert type="info" showIcon title={status.data.notice} style={{ marginBottom: 16 }} closable />
            ) : null}
            <Outlet />
          </Content>
        </Layout>
      </Layout>
    </Feedback>
  );
}
