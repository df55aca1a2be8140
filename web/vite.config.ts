// Builds the dashboard into dist/web; the gateway serves it. No third-party host is referenced.
import { defineConfig } from 'vite';

export default defineConfig({
  root: new URL('.', import.meta.url).pathname,
  base: '/',
  build: { outDir: new URL('../dist/web', import.meta.url).pathname, emptyOutDir: true, target: 'es2022', sourcemap: false },
  server: { proxy: { '/api': 'http://localhost:8080' } },
});
