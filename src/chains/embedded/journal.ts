import { and, asc, eq } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { embeddedChainJournal } from '../tables.js';
import type { ChainJournal } from './evm.js';

/** An embedded chain's journal in the service database, so chain state lives and dies with it. */
export function databaseJournal(db: Db, chain: string): ChainJournal {
  const row = (id: number) => and(eq(embeddedChainJournal.chain, chain), eq(embeddedChainJournal.id, id));
  return {
    async entries() {
      const rows = await db
        .select()
        .from(embeddedChainJournal)
        .where(eq(embeddedChainJournal.chain, chain))
        .orderBy(asc(embeddedChainJournal.id));
      return rows.map((r) => ({ id: r.id, method: r.method, params: r.params as unknown[], blockTimestamp: r.blockTimestamp }));
    },
    async append(method, params) {
      const [inserted] = await db
        .insert(embeddedChainJournal)
        .values({ chain, method, params })
        .returning({ id: embeddedChainJournal.id });
      return inserted!.id;
    },
    async stamp(id, blockTimestamp) {
      await db.update(embeddedChainJournal).set({ blockTimestamp }).where(row(id));
    },
    async discard(id) {
      await db.delete(embeddedChainJournal).where(row(id));
    },
  };
}
