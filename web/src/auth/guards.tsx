import { Spin } from 'antd';
import { lazy, Suspense, type ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router';
import { useSession } from './SessionProvider';

/** Renders children for a signed-in user; otherwise sends them to /login and back afterwards. */
export function RequireAuth({ children }: { children: ReactNode }) {
  const { status } = useSession();
  const location = useLocation();
  if (status === 'loading') return <FullPageSpin />;
  if (status === 'anonymous') {
    return <Navigate to="/login" replace state={{ from: location.pathname + location.search }} />;
  }
  return children;
}

// antd's Result (with its large illustrations) loads only when someone meets the page.
const ForbiddenPage = lazy(() => import('../pages/ForbiddenPage').then((m) => ({ default: m.ForbiddenPage })));

/** Renders children only for admin and root; the API refuses the calls for anyone else anyway. */
export function RequireAdmin({ children }: { children: ReactNode }) {
  const { user, isAdmin } = useSession();
  if (!user) return <FullPageSpin />;
  if (!isAdmin) {
    return (
      <Suspense fallback={<FullPageSpin />}>
        <ForbiddenPage />
      </Suspense>
    );
  }
  return children;
}

/** Sends a signed-in user away from the sign-in and sign-up pages. */
export function RedirectIfSignedIn({ children }: { children: ReactNode }) {
  const { status } = useSession();
  const location = useLocation();
  const from = (location.state as { from?: string } | null)?.from;
  if (status === 'loading') return <FullPageSpin />;
  if (status === 'authenticated') return <Navigate to={from && from.startsWith('/console') ? from : '/console'} replace />;
  return children;
}

export function FullPageSpin() {
  return (
    <div style={{ minHeight: '60vh', display: 'flex', alignItems: 'center', justifyContent: 'center' }}>
      <Spin size="large" />
    </div>
  );
}
