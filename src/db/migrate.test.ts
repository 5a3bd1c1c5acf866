import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabaseTarget, type TestDatabaseTarget } from '../../test/support/database.js';
import { openDatabase, type Database } from './client.js';
import { migrate } from './migrate.js';
import { DATA_REPAIRS } from './repairs.js';

/** Everything a migration could change: tables, columns, constraints, indexes. */
async function catalog(database: Database) {
  const { rows } = await database.pool.query(`
    SELECT 'column' AS kind, table_name || '.' || column_name || ':' || data_type || ':' || is_nullable || ':' || coalesce(column_default, '') AS item
      FROM information_schema.columns WHERE table_schema = 'public'
    UNION ALL SELECT 'constraint', conrelid::regclass::text || '.' || conname || ':' || pg_get_constraintdef(oid)
      FROM pg_constraint WHERE connamespace = 'public'::regnamespace
    UNION ALL SELECT 'index', indexname || ':' || indexdef FROM pg_indexes WHERE schemaname = 'public'
    ORDER BY 1, 2`);
  return rows.map((row) => `${row.kind} ${row.item}`);
}

describe('migrations', () => {
  let target: TestDatabaseTarget;
  let database: Database;
  beforeAll(async () => {
    target = await createTestDatabaseTarget();
    database = await openDatabase({ url: target.url, dataDir: null });
  });
  afterAll(async () => {
    await database.close();
    await target.drop();
  });

  it('applies every migration once; applying again changes nothing', async () => {
    const first = await migrate(database);
    expect(first.applied.length).toBeGreaterThan(0);
    const before = await catalog(database);
    expect(before.length).toBeGreaterThan(100);

    const second = await migrate(database);
    expect(second.applied).toEqual([]);
    expect(second.alreadyApplied).toEqual(first.applied);
    expect(await catalog(database)).toEqual(before);
  });

  it('creates every table of the data model', async () => {
    const { rows } = await database.pool.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
    const tables = rows.map((row) => row.tablename);
    for (const table of [
      'users', 'employers', 'employees', 'payroll_runs', 'payment_items', 'agent_authorizations', 'agent_pay_calls',
      'agent_decisions', 'escrows', 'announcements', 'announcement_dismissals', 'compliance_events', 'reputation_writes',
      'notifications', 'payments', 'payment_receipts', 'mpp_sessions', 'oauth_clients', 'oauth_codes',
      'oauth_refresh_tokens', 'virtual_address_inflows', 'idempotency_keys', 'audit_log', 'email_outbox',
    ]) {
      expect(tables).toContain(table);
    }
  });

  it('holds money as numeric(78,0) and refuses impossible states', async () => {
    const { rows } = await database.pool.query(
      "SELECT numeric_precision, numeric_scale FROM information_schema.columns WHERE table_name = 'payment_items' AND column_name = 'amount'",
    );
    expect(rows[0]).toEqual({ numeric_precision: 78, numeric_scale: 0 });
    await expect(
      database.pool.query("INSERT INTO users (id) VALUES ('u'); INSERT INTO employers (owner_user_id, name) VALUES ('u', '')"),
    ).rejects.toThrow(/employers_name_length/);
  });

  it('repairs EVM addresses entered before the address rule (wallets, allowlists) into EIP-55, once; a wrong checksum is left and named', async () => {
    const address = '0x0532b428e3f86c6a3a6cb0edbd4e7a66bf6adfae';
    const checksummed = '0x0532b428E3f86C6A3a6cb0EDbD4E7A66bF6ADFAE';
    const wrongChecksum = '0x0532B428E3f86C6A3a6cb0EDbD4E7A66bF6ADFAE';
    await database.pool.query(`
      INSERT INTO users (id) VALUES ('legacy');
      INSERT INTO employers (id, owner_user_id, name, admin_wallet) VALUES ('00000000-0000-4000-8000-000000000001', 'legacy', 'Legacy', '${address.toUpperCase().replace('0X', '0x')}');
      INSERT INTO employees (employer_id, email, full_name, wallet_address) VALUES
        ('00000000-0000-4000-8000-000000000001', 'a@legacy.example', 'A', '${address}'),
        ('00000000-0000-4000-8000-000000000001', 'b@legacy.example', 'B', '${wrongChecksum}'),
        ('00000000-0000-4000-8000-000000000001', 'c@legacy.example', 'C', '${checksummed}');
      INSERT INTO agent_authorizations (id, employer_id, label, agent_identifier, per_tx_cap, per_day_cap, allowed_recipients) VALUES
        ('00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000001', 'Legacy bot', 'legacy-bot', 1, 1,
         '["${address}", "So11111111111111111111111111111111111111112"]')`);
    const again = { ...DATA_REPAIRS[0]!, name: 'repair:test-canonical-evm-addresses' };
    const result = await migrate(database, undefined, [again]);
    expect(result.repaired).toEqual([{ name: again.name, changed: 3, refused: [`employees.wallet_address ${wrongChecksum}`] }]);
    const { rows } = await database.pool.query("SELECT email, wallet_address FROM employees WHERE email LIKE '%@legacy.example' ORDER BY email");
    expect(rows.map((row) => row.wallet_address)).toEqual([checksummed, wrongChecksum, checksummed]);
    expect((await database.pool.query("SELECT admin_wallet FROM employers WHERE owner_user_id = 'legacy'")).rows[0].admin_wallet).toBe(checksummed);
    // An allowlist kept lower-cased: its EVM entry checksummed, its Solana wallet untouched.
    const { rows: lists } = await database.pool.query("SELECT allowed_recipients FROM agent_authorizations WHERE agent_identifier = 'legacy-bot'");
    expect(lists[0].allowed_recipients).toEqual([checksummed, 'So11111111111111111111111111111111111111112']);
    expect((await migrate(database, undefined, [again])).repaired).toEqual([]);
  });

  it('refuses a migration that was edited after it was applied', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'migrations-'));
    fs.writeFileSync(path.join(dir, '0000_x.sql'), 'CREATE TABLE edited_probe (id int);');
    await migrate(database, dir);
    fs.writeFileSync(path.join(dir, '0000_x.sql'), 'CREATE TABLE edited_probe (id bigint);');
    await expect(migrate(database, dir)).rejects.toThrow(/changed after it was applied/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
