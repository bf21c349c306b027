/** Drawer widths that never overflow a phone screen. */
export const WIDE_DRAWER = 'min(736px, 100vw)';
