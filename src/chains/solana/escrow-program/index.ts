import { createHash } from 'node:crypto';
import { getBase58Decoder, type Address } from '@solana/kit';

export { escrowProgram } from './program.js';
export * from './client.js';
export { DISCRIMINATORS, EscrowProgramError, EscrowStatus, STATE_SIZE } from './layout.js';

/**
 * Where local mode's chain runs the escrow program (live mode: SOLANA_ESCROW_PROGRAM_ID). Derived
 * from a name, so it is the same on every machine and owned by no key.
 */
export const LOCAL_ESCROW_PROGRAM_ID = getBase58Decoder().decode(createHash('sha256').update('svc local escrow program v2').digest()) as Address;
