import { hkdfSync } from 'node:crypto';
import { concat, getAddress, hexToBytes, keccak256, type Address, type Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { ChainRevertError } from '../../chains/evm/connection.js';
import type { TempoChain } from '../../chains/evm/tempo-chain.js';
import type { Config } from '../../config.js';
import type { Database } from '../../db/client.js';
import type { Caller } from '../../http/context.js';
import { AppError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { recordAudit } from '../../audit/store.js';
import type { EmployersService } from '../employers/index.js';
import { mineSalt, type MineResult } from './miner.js';
import { virtualMasterStore as store } from '../employers/index.js';

/** Spec 8.1: at most this many salt-mining iterations per request. */
export const MAX_MINING_BUDGET = 50_000_000;

const SECP256K1_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/**
 * The employer's own virtual-master key (spec 2.13: never one master shared by every employer):
 * HKDF-SHA256 over the service's EVM key (EVM_SERVICE_KEY in live mode, the embedded Tempo
 * operator's key in local mode), empty salt, info `virtual-master:<employer id>`, 32 bytes. It is
 * derived again whenever needed and never stored: the same service key gives the same master.
 * (A result outside the secp256k1 range, about 2^-128 likely, moves on to info `...:<n>`.)
 */
export function virtualMasterAccount(serviceKey: Hex, employerId: string): PrivateKeyAccount {
  for (let attempt = 0; ; attempt++) {
    const info = `virtual-master:${employerId}${attempt === 0 ? '' : `:${attempt}`}`;
    const key = Buffer.from(hkdfSync('sha256', hexToBytes(serviceKey), new Uint8Array(0), info, 32));
    const scalar = BigInt(`0x${key.toString('hex')}`);
    if (scalar > 0n && scalar < SECP256K1_ORDER) return privateKeyToAccount(`0x${key.toString('hex')}`);
  }
}

/** The master id the registry assigns: bytes 4-7 of keccak256(master || salt). */
export function masterIdOf(master: Address, salt: Hex): Hex {
  return `0x${keccak256(concat([master, salt])).slice(10, 18)}`;
}

export interface VirtualMasterStatus {
  employerId: string;
  registered: boolean;
  virtualMasterId: Hex | null;
  /** The employer's master address (derived; the same before and after registration). */
  virtualMasterAddress: Address;
  virtualMasterSalt: Hex | null;
  virtualMasterTxHash: Hex | null;
  /** Where the next POST resumes when it names no startNonce. */
  nextStartNonce: bigint;
  /** Leading zero bytes the registry demands. */
  zeroBytes: number;
  /** Iterations one POST may spend. */
  budget: number;
  /** A POST for this employer is mining on this instance now. */
  mining: boolean;
}

export interface VirtualMasterOptions {
  /** The key the per-employer master keys are derived from. */
  serviceKey: Hex;
  budget: number;
  /** The registry's difficulty (read from the chain in local mode; 4 on live Tempo). */
  zeroBytes: () => Promise<number>;
  /** Mining threads (default: one per core). */
  workers?: number;
}

/** What the virtual-master service is built from: its stores and chain, and the mining options. */
export interface VirtualMasterServiceOptions extends VirtualMasterOptions {
  database: Database;
  employers: EmployersService;
  tempo: TempoChain;
}

/**
 * The service's options from config: live mode derives masters from EVM_SERVICE_KEY and mines
 * for Tempo's 4 zero bytes; local mode derives them from the embedded operator's key and reads the
 * embedded registry's difficulty, which was fixed when the chain was first created (a different
 * VIRTUAL_MASTER_ZERO_BYTES on an existing data dir is reported and otherwise ignored).
 * Null when there is no key to derive from.
 */
export function virtualMasterOptionsFrom(config: Config, tempo: TempoChain, embeddedOperatorKey: Hex | undefined, log: Logger): VirtualMasterOptions | null {
  const serviceKey = config.mode === 'live' ? config.live.evmServiceKey : embeddedOperatorKey;
  if (!serviceKey) return null;
  const configured = config.virtualMaster.zeroBytes;
  const zeroBytes =
    config.mode === 'live'
      ? () => Promise.resolve(4)
      : async () => {
          const deployed = await tempo.virtualMasterZeroBytes();
          if (deployed !== configured) {
            log.warn(
              { deployed, configured },
              'VIRTUAL_MASTER_ZERO_BYTES differs from the embedded registry, which keeps the difficulty it was created with; mining uses the registry\'s (start with a fresh DATA_DIR to change it)',
            );
          }
          return deployed;
        };
  return { serviceKey, budget: config.virtualMaster.budget, zeroBytes };
}

/**
 * Registration of an employer's virtual master (spec 2.13, 4.8): mine a salt whose
 * keccak256(master, salt) begins with the registry's zero bytes, broadcast
 * `registerVirtualMaster(salt)` from the employer's own master key, cache the result.
 *
 * One POST per employer mines at a time on an instance (409 MINING_IN_PROGRESS); across
 * instances two POSTs may mine the same range, which only wastes work: the remembered nonce only
 * moves forward, the registration is checked on chain before and after broadcasting, and caching
 * it is a compare-and-set.
 */
export class VirtualMasterService {
  private readonly mining = new Set<string>();
  private difficulty: Promise<number> | undefined;

  private readonly database: Database;
  private readonly employers: EmployersService;
  private readonly tempo: TempoChain;
  private readonly options: VirtualMasterOptions;

  constructor({ database, employers, tempo, ...options }: VirtualMasterServiceOptions) {
    this.database = database;
    this.employers = employers;
    this.tempo = tempo;
    this.options = options;
    if (options.budget < 1 || options.budget > MAX_MINING_BUDGET) throw new RangeError(`budget must be 1 to ${MAX_MINING_BUDGET}`);
  }

  async status(caller: Caller, employerId: string): Promise<VirtualMasterStatus> {
    await this.employers.requireOwned(this.database.db, caller, employerId);
    return this.statusOf(employerId);
  }

  /**
   * Mines from `startNonce` (else the remembered nonce, else 0) and registers. 409 when already
   * registered or mining; 504 MINING_BUDGET_EXHAUSTED with `nextStartNonce` when the budget ran out.
   */
  async register(caller: Caller, employerId: string, input: { startNonce?: bigint | undefined }, requestId: string | null): Promise<VirtualMasterStatus> {
    const employer = await this.employers.requireOwned(this.database.db, caller, employerId);
    if (employer.virtualMasterId) throw registeredAlready();
    if (this.mining.has(employerId)) {
      throw new AppError('MINING_IN_PROGRESS', 'A registration for this employer is already mining; try again when it has answered.');
    }
    this.mining.add(employerId);
    try {
      await this.mineAndRegister(caller, employerId, input.startNonce, requestId);
    } finally {
      this.mining.delete(employerId);
    }
    return this.statusOf(employerId);
  }

  private async mineAndRegister(caller: Caller, employerId: string, startNonce: bigint | undefined, requestId: string | null): Promise<void> {
    const db = this.database.db;
    const master = virtualMasterAccount(this.options.serviceKey, employerId);
    const row = await store.findVirtualMaster(db, employerId);
    if (!row) throw new Error(`employer ${employerId} vanished`);
    if (row.virtualMasterId) throw registeredAlready();
    // A salt found by an earlier request whose registration may have been broadcast (a crash
    // before caching, or a lost reply): finish that one before mining anew.
    if (row.virtualMasterSalt) {
      const settled = await this.settle(caller, employerId, master, row.virtualMasterSalt as Hex, row.virtualMasterTxHash as Hex | null, requestId);
      if (settled) return;
    }
    const zeroBytes = await this.zeroBytes();
    let start = startNonce ?? row.virtualMasterNextNonce ?? 0n;
    const end = start + BigInt(this.options.budget);
    for (;;) {
      const budget = Number(end - start);
      const result: MineResult =
        budget > 0 ? await mineSalt({ address: master.address, zeroBytes, startNonce: start, budget, workers: this.options.workers }) : { found: false, nextStartNonce: start, hashes: 0 };
      if (!result.found) {
        await store.advanceNextNonce(db, employerId, result.nextStartNonce);
        throw new AppError('MINING_BUDGET_EXHAUSTED', `No salt among ${this.options.budget} nonces; retry to resume at nextStartNonce (the server remembers it too).`,
          { nextStartNonce: result.nextStartNonce.toString() },
        );
      }
      await store.savePendingSalt(db, employerId, { address: master.address, salt: result.salt, nextNonce: result.nonce + 1n });
      if (await this.settle(caller, employerId, master, result.salt, null, requestId)) return;
      // Its master id belongs to another master: mine on after it, within this request's budget.
      start = result.nonce + 1n;
    }
  }

  /**
   * Registers `salt` unless the registry already holds this master under it; true once the
   * registration is on chain and cached, false when another master holds the salt's master id.
   */
  private async settle(caller: Caller, employerId: string, master: PrivateKeyAccount, salt: Hex, knownTxHash: Hex | null, requestId: string | null): Promise<boolean> {
    const db = this.database.db;
    const masterId = masterIdOf(master.address, salt);
    const holder = await this.tempo.virtualMaster(masterId);
    if (holder && getAddress(holder) === master.address) {
      // Registered by an earlier attempt: keep its transaction hash if that is what mined it.
      const receipt = knownTxHash ? await this.tempo.connection.receipt(knownTxHash) : null;
      await this.cache(caller, employerId, { masterId, address: master.address, salt, txHash: receipt?.status === 'success' ? knownTxHash : null }, requestId);
      return true;
    }
    if (holder) {
      await store.clearPendingSalt(db, employerId, salt);
      return false;
    }
    try {
      const written = await this.tempo.registerVirtualMaster(master, salt, {
        beforeBroadcast: ({ hash }) => store.savePendingTxHash(db, employerId, salt, hash),
      });
      await this.cache(caller, employerId, { masterId: written.masterId, address: master.address, salt, txHash: written.txHash }, requestId);
      return true;
    } catch (error) {
      if (!(error instanceof ChainRevertError)) throw error;
      // Lost a race (another instance registered the same salt, or took the id): look again.
      const now = await this.tempo.virtualMaster(masterId);
      if (now && getAddress(now) === master.address) {
        await this.cache(caller, employerId, { masterId, address: master.address, salt, txHash: null }, requestId);
        return true;
      }
      if (now) {
        await store.clearPendingSalt(db, employerId, salt);
        return false;
      }
      throw error;
    }
  }

  private async cache(
    caller: Caller,
    employerId: string,
    registered: { masterId: Hex; address: Address; salt: Hex; txHash: Hex | null },
    requestId: string | null,
  ): Promise<void> {
    await this.database.transaction(async (tx) => {
      const masterId = registered.masterId.toLowerCase();
      if (!(await store.saveRegistered(tx.db, employerId, { ...registered, masterId }))) return;
      await recordAudit(tx.db, {
        actorUserId: caller.userId,
        actorKind: 'user',
        action: 'virtual_master.registered',
        employerId,
        targetType: 'employer',
        targetId: employerId,
        details: { virtual_master_id: masterId, virtual_master_address: registered.address, tx_hash: registered.txHash },
        requestId,
      });
    });
  }

  private async statusOf(employerId: string): Promise<VirtualMasterStatus> {
    const row = await store.findVirtualMaster(this.database.db, employerId);
    if (!row) throw new Error(`employer ${employerId} vanished`);
    const registered = row.virtualMasterId !== null;
    return {
      employerId,
      registered,
      virtualMasterId: row.virtualMasterId as Hex | null,
      virtualMasterAddress: virtualMasterAccount(this.options.serviceKey, employerId).address,
      virtualMasterSalt: registered ? (row.virtualMasterSalt as Hex) : null,
      virtualMasterTxHash: registered ? (row.virtualMasterTxHash as Hex | null) : null,
      nextStartNonce: row.virtualMasterNextNonce ?? 0n,
      zeroBytes: await this.zeroBytes(),
      budget: this.options.budget,
      mining: this.mining.has(employerId),
    };
  }

  /** The registry's difficulty, read once (a failed read is tried again next time). */
  private zeroBytes(): Promise<number> {
    this.difficulty ??= this.options.zeroBytes().catch((error: unknown) => {
      this.difficulty = undefined;
      throw error;
    });
    return this.difficulty;
  }
}

const registeredAlready = () =>
  new AppError('VIRTUAL_MASTER_REGISTERED', 'This employer already registered its virtual master; GET it for the details.');
