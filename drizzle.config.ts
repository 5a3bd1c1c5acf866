import { defineConfig } from 'drizzle-kit';

// `npm run db:generate` writes a new SQL migration from the tables below (each feature's
// `tables.ts`, beside the code that owns them; column helpers in src/db/columns.ts); review and commit it.
export default defineConfig({
  dialect: 'postgresql',
  schema: ['./src/features/*/tables.ts', './src/payments/tables.ts', './src/audit/tables.ts', './src/http/tables.ts', './src/chains/tables.ts', './src/providers/bridge/tables.ts'],
  out: './src/db/migrations',
});
