import { z } from '@hono/zod-openapi';
import { usdAmountSchema } from '../../http/validation.js';
import { SANDBOX_PAYMENT_METHODS } from '../../payments/card/sandbox.js';
import { MAX_ADVANCE_SECONDS } from '../../clock/clock.js';

export const TokenRequest = z
  .object({
    sub: z.string().trim().min(1).max(255).openapi({ example: 'demo-owner', description: 'The user id.' }),
    email: z.string().trim().max(254).pipe(z.email()).optional().openapi({ example: 'owner@demo.local' }),
  })
  .openapi('DevTokenRequest');
export const TokenResponse = z.object({ token: z.string() }).openapi('DevTokenResponse');
export const Jwks = z.object({ keys: z.array(z.object({}).loose()) }).openapi('Jwks');

export const FaucetRequest = z
  .object({
    network: z.string().min(1).openapi({ example: 'eip155:4217', description: 'CAIP-2 id of an embedded network.' }),
    address: z.string().min(1).max(64).openapi({ description: 'An EVM (0x) or Solana (base58) address, matching the network.' }),
    amount: usdAmountSchema.openapi({ example: '1000', description: 'USD, at most 1,000,000.' }),
  })
  .openapi('DevFaucetRequest');
export const FaucetResponse = z
  .object({ network: z.string(), address: z.string(), amount: z.string(), tx_hash: z.string() })
  .openapi('DevFaucetResponse');

export const ChainsResponse = z
  .object({
    networks: z.array(
      z.object({ network: z.string(), chain_id: z.number().int().nullable(), rpc_url: z.string(), contracts: z.record(z.string(), z.string()) }),
    ),
  })
  .openapi('DevChains');

export const CardTokenRequest = z
  .object({
    payment_method: z.enum(SANDBOX_PAYMENT_METHODS).openapi({ description: '`pm_card_chargeDeclined` is declined when charged.' }),
    amount: z.string().regex(/^[1-9]\d{0,11}$/, 'must be a positive integer (minor units)').openapi({ example: '100', description: 'Spending limit in minor units (cents).' }),
    currency: z.string().regex(/^[a-z]{3}$/, 'must be a lower-case ISO currency code').openapi({ example: 'usd' }),
    expires_at: z.number().int().positive().optional().openapi({ description: 'Unix seconds; default one hour from now.' }),
  })
  .openapi('DevCardTokenRequest');
export const CardTokenResponse = z.object({ spt: z.string() }).openapi('DevCardTokenResponse');

/** A JSON-RPC response or batch of responses, passed through as the chain answered. */
export const JsonRpcAnswer = z.unknown();

export const DevWalletsResponse = z
  .object({
    mnemonic: z.string().openapi({ description: 'The public development mnemonic the keys derive from (Hardhat and Anvil use it too).' }),
    wallets: z.array(
      z.object({
        index: z.number().int().openapi({ description: "BIP-44 address index (m/44'/60'/0'/0/index)." }),
        address: z.string(),
        private_key: z.string().openapi({ description: 'A public test key: never fund it outside a local chain.' }),
      }),
    ),
  })
  .openapi('DevWallets');

export const ClockAdvanceRequest = z
  .object({
    seconds: z
      .number()
      .int()
      .min(1)
      .max(MAX_ADVANCE_SECONDS)
      .openapi({ example: 7200, description: `Whole seconds to move forward: at least 1 (time never goes back), at most ${MAX_ADVANCE_SECONDS} (366 days) at once.` }),
  })
  .openapi('DevClockAdvanceRequest');
export const ClockReading = z
  .object({
    now: z.string().openapi({ example: '2026-11-27T14:00:00.000Z', description: 'The service time (ISO 8601).' }),
    unix: z.number().int().openapi({ example: 1795788000, description: 'The service time in Unix seconds; embedded Tempo and Solana run at it too.' }),
    offset_seconds: z.number().int().openapi({ example: 7200, description: 'How far the service time is ahead of the real time: every advance so far.' }),
  })
  .openapi('DevClock');
