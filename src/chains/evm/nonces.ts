import { keccak256, type Address, type Hex } from 'viem';
import type { Database, Tx } from '../../db/client.js';

/** One signing key on one chain (`eip155:<id>`). */
export interface SignerKey {
  chain: string;
  address: Address;
}

/** A transaction signed with a nonce the ledger handed out. */
export interface NoncedTransaction {
  nonce: number;
  hash: Hex;
  raw: Hex;
}

/**
 * The nonces of the service's signing keys, in PostgreSQL so every instance shares them
 * (issue 25): a write takes its key's next nonce under the key's row lock, in the transaction that
 * records the signed bytes, so no two transactions carry one nonce and every handed-out nonce has
 * bytes that can be broadcast again or replaced by a filler.
 */
export class NonceLedger {
  private readonly watchers = new Set<(key: SignerKey, nonceWaitSeconds: number) => void>();

  constructor(private readonly database: Database) {}

  /**
   * Signs with the key's next nonce and records the signed transaction, in one transaction. The
   * first write of a key starts from `chainCount` (the chain's pending transaction count).
   */
  async sign(key: SignerKey, chainCount: () => Promise<number>, sign: (nonce: number) => Promise<Hex>): Promise<NoncedTransaction> {
    let waitSeconds = 0;
    const signed = await this.database.transaction(async (tx) => {
      const asked = performance.now();
      let nonce = await this.take(tx, key);
      waitSeconds = (performance.now() - asked) / 1000;
      if (nonce === null) {
        await tx.query('INSERT INTO chain_signers (chain, address, next_nonce) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
          key.chain,
          key.address,
          await chainCount(),
        ]);
        nonce = await this.take(tx, key);
        if (nonce === null) throw new Error(`no nonce row for ${key.address} on ${key.chain}`);
      }
      const raw = await sign(nonce);
      const hash = keccak256(raw);
      await tx.query("INSERT INTO chain_writes (chain, address, nonce, hash, raw, kind) VALUES ($1, $2, $3, $4, $5, 'write')", [
        key.chain,
        key.address,
        nonce,
        hash,
        raw,
      ]);
      return { nonce, hash, raw };
    });
    for (const watcher of this.watchers) watcher(key, waitSeconds);
    return signed;
  }

  /** Metrics: `watcher` hears of every signed write and how long it waited for its nonce (the row lock). */
  watch(watcher: (key: SignerKey, nonceWaitSeconds: number) => void): void {
    this.watchers.add(watcher);
  }

  /** The chain has used every nonce below `chainCount` (another signer of the key): skip past them. */
  async catchUp(key: SignerKey, chainCount: number): Promise<void> {
    await this.database.pool.query(
      'UPDATE chain_signers SET next_nonce = GREATEST(next_nonce, $3), updated_at = now() WHERE chain = $1 AND address = $2',
      [key.chain, key.address, chainCount],
    );
  }

  /**
   * Forgets the writes the chain has mined (nonces below `minedCount`) and returns those still
   * waiting that were signed more than `staleMs` ago, lowest nonce first.
   */
  async stale(key: SignerKey, minedCount: number, staleMs: number): Promise<NoncedTransaction[]> {
    await this.database.pool.query('DELETE FROM chain_writes WHERE chain = $1 AND address = $2 AND nonce < $3', [key.chain, key.address, minedCount]);
    const { rows } = await this.database.pool.query<{ nonce: string; hash: Hex; raw: Hex }>(
      `SELECT nonce, hash, raw FROM chain_writes
        WHERE chain = $1 AND address = $2 AND created_at < now() - make_interval(secs => $3)
        ORDER BY nonce`,
      [key.chain, key.address, staleMs / 1000],
    );
    return rows.map((row) => ({ nonce: Number(row.nonce), hash: row.hash, raw: row.raw }));
  }

  /** Records the filler that replaces a nonce's refused transaction. */
  async fill(key: SignerKey, filler: NoncedTransaction): Promise<void> {
    await this.database.pool.query(
      `INSERT INTO chain_writes (chain, address, nonce, hash, raw, kind) VALUES ($1, $2, $3, $4, $5, 'filler')
       ON CONFLICT (chain, address, nonce) DO UPDATE SET hash = EXCLUDED.hash, raw = EXCLUDED.raw, kind = 'filler', created_at = now()`,
      [key.chain, key.address, filler.nonce, filler.hash, filler.raw],
    );
  }

  /** A transaction the chain refused outright (its nonce was used by another): nothing to rebroadcast. */
  async forget(key: SignerKey, nonce: number, hash: Hex): Promise<void> {
    await this.database.pool.query('DELETE FROM chain_writes WHERE chain = $1 AND address = $2 AND nonce = $3 AND hash = $4', [
      key.chain,
      key.address,
      nonce,
      hash,
    ]);
  }

  private async take(tx: Tx, key: SignerKey) {
    const { rows } = await tx.query(
      'UPDATE chain_signers SET next_nonce = next_nonce + 1, updated_at = now() WHERE chain = $1 AND address = $2 RETURNING next_nonce - 1 AS nonce',
      [key.chain, key.address],
    );
    return rows[0] ? Number(rows[0].nonce) : null;
  }
}
