import { defineConfig } from 'drizzle-kit';

// `npm run db:generate` writes a new SQL migration from src/db/schema.ts; review and commit it.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema.ts',
  out: './src/db/migrations',
});
