import { useQueryClient } from '@tanstack/react-query';
import { createContext, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { selfKey, useSelf } from '../api/auth';
import { api } from '../api/http';
import type { User } from '../api/types';

export type SessionStatus = 'loading' | 'anonymous' | 'authenticated';

interface SessionValue {
  status: SessionStatus;
  user: User | undefined;
  isAdmin: boolean;
}

const SessionContext = createContext<SessionValue>({ status: 'loading', user: undefined, isAdmin: false });

/**
 * Tracks whether someone is signed in. On first load it trades the refresh cookie for an access
 * token, so a reload or a deep link keeps the session without storing the JWT anywhere.
 */
export function SessionProvider({ children }: { children: ReactNode }) {
  const qc = useQueryClient();
  const [status, setStatus] = useState<SessionStatus>(api.getToken() ? 'authenticated' : 'loading');

  useEffect(() => {
    const off = api.onSession((session) => {
      if (session) {
        qc.setQueryData(selfKey, session.user);
        setStatus('authenticated');
      } else {
        setStatus('anonymous');
        qc.removeQueries({ predicate: (q) => q.queryKey[0] !== 'status' });
      }
    });
    if (!api.getToken()) void api.refresh();
    return off;
  }, [qc]);

  const self = useSelf(status === 'authenticated');
  const user = status === 'authenticated' ? self.data : undefined;
  const value = useMemo<SessionValue>(
    () => ({ status, user, isAdmin: user?.role === 'admin' || user?.role === 'root' }),
    [status, user],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

/** The session: status, the signed-in user and whether they may see admin pages. */
export function useSession(): SessionValue {
  return useContext(SessionContext);
}
