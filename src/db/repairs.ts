import { canonicalEvmAddress, EVM_ADDRESS_PATTERN } from '../chains/evm/address.js';
import type { Tx } from './client.js';

/**
 * Data changes SQL cannot make, applied once each after the SQL migrations (src/db/migrate.ts),
 * in order, inside the same transaction. Like a migration, an applied repair is history: a new
 * change needs a new entry.
 */
export interface DataRepair {
  name: string;
  run(tx: Tx): Promise<{ changed: number; refused: string[] }>;
}

/** The EVM addresses people entered before one address rule (#33) and that reach the chain. */
const ENTERED_EVM_ADDRESSES = [
  ['employers', 'admin_wallet'],
  ['employees', 'wallet_address'],
  ['payment_items', 'wallet_address'],
  ['stream_stops', 'wallet_address'],
  ['agent_pay_calls', 'recipient_wallet'],
  ['offramp_transfers', 'source_address'],
] as const;

/**
 * Rewrites every stored EVM address in its EIP-55 spelling (keccak is not in SQL), so they are stored
 * and compared in one form: the wallet columns, and agent allowlists (kept lower-cased before).
 * A mixed-case value with a wrong checksum may be a typo: it is left as it was and named, for a
 * person to correct, rather than paid to.
 */
async function canonicalEvmAddresses(tx: Tx): Promise<{ changed: number; refused: string[] }> {
  let changed = 0;
  const refused: string[] = [];
  const canonical = (where: string, value: string) => {
    if (!EVM_ADDRESS_PATTERN.test(value)) return value; // a Solana wallet in an allowlist
    const address = canonicalEvmAddress(value);
    if (address === null) refused.push(`${where} ${value}`);
    return address ?? value;
  };
  for (const [table, column] of ENTERED_EVM_ADDRESSES) {
    const { rows } = await tx.query(`SELECT DISTINCT ${column} AS value FROM ${table} WHERE ${column} ~ '^0x[0-9a-fA-F]{40}$'`);
    for (const { value } of rows as { value: string }[]) {
      const address = canonical(`${table}.${column}`, value);
      if (address === value) continue;
      const updated = await tx.query(`UPDATE ${table} SET ${column} = $1 WHERE ${column} = $2 RETURNING 1`, [address, value]);
      changed += updated.rows.length;
    }
  }
  const { rows } = await tx.query('SELECT id, allowed_recipients AS list FROM agent_authorizations WHERE allowed_recipients IS NOT NULL');
  for (const { id, list } of rows as { id: string; list: string[] }[]) {
    const repaired = list.map((entry) => canonical(`agent_authorizations.allowed_recipients ${id}`, entry));
    if (repaired.every((entry, i) => entry === list[i])) continue;
    await tx.query('UPDATE agent_authorizations SET allowed_recipients = $1::jsonb WHERE id = $2', [JSON.stringify(repaired), id]);
    changed += 1;
  }
  return { changed, refused };
}

export const DATA_REPAIRS: DataRepair[] = [{ name: 'repair:0024_canonical_evm_addresses', run: canonicalEvmAddresses }];
