import { lazy, Suspense, type ComponentType, type ReactNode } from 'react';
import { Navigate, useLocation, useRoutes } from 'react-router';
import { FullPageSpin, RedirectIfSignedIn, RequireAdmin, RequireAuth } from './auth/guards';
import { loadAdminCatalogue } from './i18n';

function page(load: () => Promise<{ default: ComponentType }>): ReactNode {
  const Page = lazy(load);
  return (
    <Suspense fallback={<FullPageSpin />}>
      <Page />
    </Suspense>
  );
}

/** A page module that exports a named component rather than a default one. */
function named<K extends string>(load: () => Promise<Record<K, ComponentType>>, name: K) {
  return () => load().then((m) => ({ default: m[name] }));
}

/** A public page that shows messages (`App.useApp()`): it loads antd's App with itself (see Feedback). */
function withFeedback(load: () => Promise<{ default: ComponentType }>) {
  return () =>
    Promise.all([load(), import('./components/Feedback')]).then(([{ default: Page }, { Feedback }]) => ({
      default: () => (
        <Feedback>
          <Page />
        </Feedback>
      ),
    }));
}

// Every page loads on demand, the sign-in pages too: the entry holds only the providers and the route table,
// so a signed-in visit does not download the sign-in forms and the sign-in page none of the console.
const notFound = page(named(() => import('./pages/NotFoundPage'), 'NotFoundPage'));

// The console's frame (menu, header) and everything behind sign-in load on demand: the sign-in page does not
// download them.
const AppLayout = lazy(() => import('./components/AppLayout').then((m) => ({ default: m.AppLayout })));

/** An admin page: its module and the admin pages' text (a catalogue chunk of its own) load together. */
function admin(load: () => Promise<{ default: ComponentType }>): ReactNode {
  return <RequireAdmin>{page(() => Promise.all([load(), loadAdminCatalogue()]).then(([m]) => m))}</RequireAdmin>;
}

/** Sends /wallet/return?… (the URL payment providers return to) to the console page, keeping the query. */
function WalletReturnRedirect() {
  const { search } = useLocation();
  return <Navigate to={`/console/wallet/return${search}`} replace />;
}

/** The whole route table: public auth pages, then the console under /console. */
export const routes = [
  { path: '/', element: <Navigate to="/console" replace /> },
  {
    path: '/login',
    element: (
      <RedirectIfSignedIn>
        {page(named(() => import('./pages/auth/LoginPage'), 'LoginPage'))}
      </RedirectIfSignedIn>
    ),
  },
  {
    path: '/register',
    element: (
      <RedirectIfSignedIn>
        {page(withFeedback(named(() => import('./pages/auth/RegisterPage'), 'RegisterPage')))}
      </RedirectIfSignedIn>
    ),
  },
  // E-mail flows of sign-in: the reset page is what the reset e-mail links to.
  { path: '/verify-email', element: page(withFeedback(named(() => import('./pages/auth/VerifyEmailPage'), 'VerifyEmailPage'))) },
  { path: '/forgot-password', element: page(withFeedback(named(() => import('./pages/auth/ForgotPasswordPage'), 'ForgotPasswordPage'))) },
  { path: '/reset-password', element: page(withFeedback(named(() => import('./pages/auth/ResetPasswordPage'), 'ResetPasswordPage'))) },
  { path: '/wallet/return', element: <WalletReturnRedirect /> },
  {
    path: '/console',
    element: (
      <RequireAuth>
        <Suspense fallback={<FullPageSpin />}>
          <AppLayout />
        </Suspense>
      </RequireAuth>
    ),
    children: [
      { index: true, element: page(() => import('./pages/dashboard/DashboardPage')) },
      { path: 'keys', element: page(() => import('./pages/keys/KeysPage')) },
      { path: 'logs', element: page(() => import('./pages/logs/LogsPage')) },
      { path: 'playground', element: page(() => import('./pages/playground/PlaygroundPage')) },
      { path: 'wallet', element: page(() => import('./pages/wallet/WalletPage')) },
      { path: 'wallet/return', element: page(() => import('./pages/wallet/WalletReturnPage')) },
      { path: 'pricing', element: page(() => import('./pages/pricing/PricingPage')) },
      { path: 'profile', element: page(() => import('./pages/profile/ProfilePage')) },
      { path: 'routing', element: page(() => import('./pages/routing/SimulatorPage')) },
      { path: 'admin/routing', element: admin(() => import('./pages/admin/routing/RoutingConfigPage')) },
      { path: 'admin/routing/decisions', element: admin(() => import('./pages/admin/routing/DecisionsPage')) },
      { path: 'admin/business', element: admin(() => import('./pages/admin/business/BusinessPage')) },
      { path: 'admin/alerts', element: admin(() => import('./pages/admin/alerts/AlertsPage')) },
      { path: 'admin/channels', element: admin(() => import('./pages/admin/channels/ChannelsPage')) },
      { path: 'admin/users', element: admin(() => import('./pages/admin/users/UsersPage')) },
      { path: 'admin/keys', element: admin(() => import('./pages/admin/keys/AllKeysPage')) },
      { path: 'admin/groups', element: admin(() => import('./pages/admin/groups/GroupsPage')) },
      { path: 'admin/tiers', element: admin(() => import('./pages/admin/tiers/TiersPage')) },
      { path: 'admin/pricing', element: admin(() => import('./pages/admin/pricing/ModelPricingPage')) },
      { path: 'admin/logs', element: admin(() => import('./pages/admin/logs/AllLogsPage')) },
      { path: 'admin/redemptions', element: admin(() => import('./pages/admin/redemptions/RedemptionsPage')) },
      { path: 'admin/orders', element: admin(() => import('./pages/admin/orders/OrdersPage')) },
      { path: 'admin/payment', element: admin(() => import('./pages/admin/payment/PaymentSettingsPage')) },
      { path: 'admin/settings', element: admin(() => import('./pages/admin/settings/SettingsPage')) },
      { path: 'admin/audit', element: admin(() => import('./pages/admin/audit/AuditPage')) },
      { path: '*', element: notFound },
    ],
  },
  { path: '*', element: notFound },
];

/**
 * The route table, rendered inside a BrowserRouter (React Router's declarative mode): the console uses no
 * loaders, actions or fetchers, and the data router (`createBrowserRouter`) would add 14 KB (brotli) to every
 * first load for them.
 */
export function AppRoutes() {
  return useRoutes(routes);
}
