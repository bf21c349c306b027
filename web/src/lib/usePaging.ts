import { useState } from 'react';
import type { TablePaginationConfig } from 'antd';

/** Page state of a server-paged table: the page and size to query, and the table's pagination prop. */
export function usePaging(initialSize = 20, showSizeChanger = true) {
  const [page, setPage] = useState(1);
  const [size, setSize] = useState(initialSize);
  const pagination = (total: number | undefined): TablePaginationConfig => ({
    current: page,
    pageSize: size,
    total: total ?? 0,
    showSizeChanger,
    onChange: (p, s) => {
      setPage(p);
      setSize(s);
    },
  });
  return { page, size, setPage, pagination };
}
