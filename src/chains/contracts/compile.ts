import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Abi, Hex } from 'viem';

export interface ContractArtifact {
  abi: Abi;
  bytecode: Hex;
}

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CONTRACTS_DIR = path.join(ROOT, 'contracts');
// Compiled output is a cache, never committed: keyed by the sources and the compiler version.
const CACHE_DIR = path.join(ROOT, 'node_modules', '.cache', 'contracts');
const EVM_VERSION = 'cancun';

let loaded: Promise<Record<string, ContractArtifact>> | undefined;

/** Every contract in contracts/*.sol, compiled once per source change (solc from npm). */
export function loadArtifacts(): Promise<Record<string, ContractArtifact>> {
  loaded ??= compileAll();
  return loaded;
}

async function compileAll(): Promise<Record<string, ContractArtifact>> {
  const files = fs
    .readdirSync(CONTRACTS_DIR)
    .filter((name) => name.endsWith('.sol'))
    .sort();
  const sources = Object.fromEntries(files.map((name) => [name, { content: fs.readFileSync(path.join(CONTRACTS_DIR, name), 'utf8') }]));
  // The compiler's package version keys the cache, so a cache hit never loads the compiler.
  const solcVersion = (JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', 'solc', 'package.json'), 'utf8')) as { version: string }).version;
  const key = createHash('sha256')
    .update(solcVersion)
    .update(EVM_VERSION)
    .update(JSON.stringify(sources))
    .digest('hex')
    .slice(0, 16);
  const cacheFile = path.join(CACHE_DIR, `${key}.json`);
  if (fs.existsSync(cacheFile)) return JSON.parse(fs.readFileSync(cacheFile, 'utf8')) as Record<string, ContractArtifact>;

  const { default: solc } = (await import('solc')) as { default: { compile(input: string): string } };
  const input = {
    language: 'Solidity',
    sources,
    settings: {
      evmVersion: EVM_VERSION,
      optimizer: { enabled: true, runs: 200 },
      viaIR: true, // the ERC-8004 feedback event needs more stack than the legacy pipeline gives
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(`contract compilation failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`);

  const artifacts: Record<string, ContractArtifact> = {};
  for (const file of Object.values(output.contracts)) {
    for (const [name, contract] of Object.entries(file)) {
      if (contract.evm.bytecode.object) artifacts[name] = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
    }
  }
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  fs.writeFileSync(`${cacheFile}.tmp`, JSON.stringify(artifacts));
  fs.renameSync(`${cacheFile}.tmp`, cacheFile); // atomic: parallel test workers may race here
  return artifacts;
}
