import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The SPA is built into web/dist and served by the API server (one port, one process).
// `npm run dev:web` proxies /api to a server on :3000 for hot reloading.
export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true },
  server: { proxy: { '/api': 'http://localhost:3000', '/healthz': 'http://localhost:3000' } },
});
