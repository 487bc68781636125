// The dashboard's build: everything bundled (no CDN), served by `skiff up` at /ui/ from build/web.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: import.meta.dirname,
  base: '/ui/',
  plugins: [react()],
  build: {
    outDir: '../build/web',
    emptyOutDir: true,
    chunkSizeWarningLimit: 2000,
    sourcemap: false,
  },
  server: {
    // `npx vite web` during development: the API comes from a running `skiff up`
    proxy: { '/api': 'http://127.0.0.1:8080', '/apis': 'http://127.0.0.1:8080', '/serving': 'http://127.0.0.1:8080', '/metrics': 'http://127.0.0.1:8080' },
  },
  test: {
    include: ['src/**/*.test.ts', 'src/**/*.test.tsx'],
    environment: 'node',
  },
});
