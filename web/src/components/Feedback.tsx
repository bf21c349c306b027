import { App } from 'antd';
import type { ReactNode } from 'react';

/**
 * antd's App (the message, notification and modal APIs pages reach through `App.useApp()`) around a part of
 * the console. It is not at the root: its modal and notification code is about 25 KB (brotli) that the sign-in
 * page never uses, so the console frame and the pages that show messages load it with themselves.
 */
export function Feedback({ children }: { children: ReactNode }) {
  return <App>{children}</App>;
}
