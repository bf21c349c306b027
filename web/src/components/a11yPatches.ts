import { useEffect } from 'react';

/**
 * Two accessibility gaps in antd's Table that no prop closes, patched on the rendered DOM:
 * - the hidden measuring row of a scrolling table copies the column titles (a "select all" checkbox too)
 *   under aria-hidden, where keyboard focus could still land: it is made inert;
 * - a table wider than its box scrolls sideways inside a div that keyboard users cannot reach: the div gets
 *   into the tab order (and a name), so arrow keys scroll it.
 * Runs once per animation frame after DOM changes, touching only elements not patched yet.
 */
export function patchTables(root: ParentNode = document): void {
  root.querySelectorAll('.ant-table-measure-row:not([inert])').forEach((el) => el.setAttribute('inert', ''));
  root.querySelectorAll<HTMLElement>('.ant-table-content, .ant-table-body').forEach((el) => {
    if (el.scrollWidth > el.clientWidth + 1 && !el.hasAttribute('tabindex')) {
      el.tabIndex = 0;
      el.setAttribute('role', 'region');
      const caption = el.closest('.ant-card')?.querySelector('.ant-card-head-title')?.textContent || document.querySelector('h1')?.textContent;
      if (caption) el.setAttribute('aria-label', caption);
    }
  });
}

/** Keeps patchTables applied while the console is mounted. */
export function useTableA11yPatches(): void {
  useEffect(() => {
    let frame = 0;
    const schedule = () => {
      if (!frame) frame = requestAnimationFrame(() => {
        frame = 0;
        patchTables();
      });
    };
    const observer = new MutationObserver(schedule);
    observer.observe(document.body, { subtree: true, childList: true });
    window.addEventListener('resize', schedule);
    schedule();
    return () => {
      observer.disconnect();
      window.removeEventListener('resize', schedule);
      if (frame) cancelAnimationFrame(frame);
    };
  }, []);
}
