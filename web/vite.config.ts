import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

const backend = process.env.TOLLGATE_DEV_BACKEND ?? 'http://localhost:3000';

export default defineConfig({
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    chunkSizeWarningLimit: 2000,
    rolldownOptions: {
      output: {
        // Vendor chunks change only with a dependency upgrade, so browsers keep them across our releases.
        // antd is left to the automatic split: one antd chunk would make the sign-in page load the table,
        // date picker and every other component the console uses.
        codeSplitting: {
          groups: [
            {
              name: 'vendor-react',
              test: /node_modules[\\/](react|react-dom|scheduler|react-router|@tanstack|i18next|react-i18next)[\\/]/,
              priority: 20,
            },
          ],
        },
      },
    },
  },
  server: {
    port: 5173,
    proxy: {
      '/api': { target: backend, changeOrigin: true },
      '/v1': { target: backend, changeOrigin: true },
      '/healthz': { target: backend, changeOrigin: true },
      '/readyz': { target: backend, changeOrigin: true },
    },
  },
  test: {
    globals: true,
    environment: 'jsdom',
    setupFiles: ['./src/test/setup.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
    css: false,
    // antd under jsdom is slow on a busy 2-core machine; generous limits keep the suite from flaking.
    testTimeout: 30_000,
  },
});
