import type { Services } from '../../services.js';
import type { Database } from '../../db/client.js';
import type { Chains } from '../../chains/index.js';
import type { Caller } from '../../http/context.js';
import { devWallets, type Faucet } from '../dev/index.js';
import type { TreasuryService } from '../treasury/index.js';

/** Local mode's demo tenant: sign in as `demo-owner`, `demo-employee` or `demo-admin`. */
export const DEMO_USERS = {
  owner: { id: 'demo-owner', email: 'owner@demo-payroll.example' },
  employee: { id: 'demo-employee', email: 'ada@demo-payroll.example' },
  admin: { id: 'demo-admin', email: 'admin@demo-payroll.example' },
} as const;

/**
 * Paid to development wallets (public test keys, src/features/dev/wallets.ts): the portal's
 * development browser wallet holds Ada's key, so the demo employee can cash out with one click.
 */
const DEMO_EMPLOYEES = [
  { email: DEMO_USERS.employee.email, fullName: 'Ada Lovelace', salary: '120000', wallet: devWallets()[1]!.address, department: 'Engineering' },
  { email: 'grace@demo-payroll.example', fullName: 'Grace Hopper', salary: '135000', wallet: devWallets()[2]!.address, department: 'Engineering' },
  { email: 'alan@demo-payroll.example', fullName: 'Alan Turing', salary: '98000', wallet: devWallets()[3]!.address, department: 'Research' },
];

/**
 * Seeds the demo employer through the same services the API uses. Idempotent: every step is
 * create-or-return, so each start finds the demo as it left it.
 */
export async function seedDemo(services: Services, database: Database): Promise<{ employerId: string }> {
  await database.transaction(async (tx) => {
    for (const user of Object.values(DEMO_USERS)) {
      await services.users.ensureUser(tx.db, { id: user.id, email: user.email, emailVerified: true });
    }
  });
  const owner: Caller = {
    userId: DEMO_USERS.owner.id,
    email: DEMO_USERS.owner.email,
    isPlatformAdmin: false,
    ownedEmployerId: null,
    employeeIds: [],
  };
  const { employer } = await services.employers.createOrGet(owner, { name: 'Demo Robotics Inc.' }, 'seed');
  for (const person of DEMO_EMPLOYEES) {
    await services.employers.addEmployee(
      owner,
      employer.id,
      {
        email: person.email,
        fullName: person.fullName,
        walletAddress: person.wallet,
        annualSalaryUsd: person.salary,
        department: person.department,
      },
      'seed',
    );
  }
  return { employerId: employer.id };
}

const DEMO_TREASURY = 250_000n * 1_000_000n;
const DEMO_SOLANA_FLOAT = 10_000n * 1_000_000n;
const DEMO_EMPLOYEE_WALLET = 1_000n * 1_000_000n;

/**
 * Local mode's demo money: the demo employer's treasury holds $250,000 (opened and funded once),
 * the service's Solana payroll float holds $10,000, so payroll runs work at once, and the demo
 * employee's wallet holds $1,000 (and gas), so a cash-out can be sent from it at once.
 */
export async function fundDemo(employerId: string, treasury: TreasuryService, chains: Chains, faucet: Faucet): Promise<void> {
  const { available, locked, accountId } = await treasury.account(employerId);
  if (available + locked === 0n) {
    await faucet.fund(chains.tempo.network, chains.tempo.serviceAddress, DEMO_TREASURY);
    await chains.tempo.depositToTreasury(accountId, DEMO_TREASURY);
  }
  if ((await chains.solana.tokenBalance(chains.solana.serviceAddress).catch(() => 0n)) === 0n) {
    await faucet.fund(chains.solana.network, chains.solana.serviceAddress, DEMO_SOLANA_FLOAT);
  }
  const ada = DEMO_EMPLOYEES[0]!.wallet;
  if ((await chains.tempo.balanceOf(ada)) === 0n) await faucet.fund(chains.tempo.network, ada, DEMO_EMPLOYEE_WALLET);
}
