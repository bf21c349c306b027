import { Flex, Typography } from 'antd';
import type { ReactNode } from 'react';

/** A page title (the page's h1) with its actions on the right; wraps on narrow screens. */
export function PageHeader({ title, extra }: { title: ReactNode; extra?: ReactNode }) {
  return (
    <Flex justify="space-between" align="center" wrap gap={12} style={{ marginBottom: 16 }}>
      {/* The page's one h1, sized like the section titles it always looked like. */}
      <Typography.Title level={1} style={{ margin: 0, fontSize: 24 }}>
        {title}
      </Typography.Title>
      {extra ? (
        <Flex gap={8} wrap>
          {extra}
        </Flex>
      ) : null}
    </Flex>
  );
}
