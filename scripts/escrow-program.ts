// `npm run escrow-program -- --out escrow.so`: writes the escrow program (assembled from
// src/chains/solana/escrow-program/program.ts) for `solana program deploy escrow.so`; the deployed
// program id then goes in SOLANA_ESCROW_PROGRAM_ID (docs/operations.md).
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { escrowProgram } from '../src/chains/solana/escrow-program/index.js';

const { values } = parseArgs({ options: { out: { type: 'string' } } });
if (!values.out) {
  process.stderr.write('usage: npm run escrow-program -- --out <file.so>\n');
  process.exit(2);
}
const elf = escrowProgram();
writeFileSync(values.out, elf);
process.stdout.write(`${values.out}: ${elf.length} bytes, sha256 ${createHash('sha256').update(elf).digest('hex')}\n`);
