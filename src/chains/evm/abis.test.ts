import { formatAbiItem } from 'viem/utils';
import type { Abi, AbiEvent, AbiFunction } from 'viem';
import { Session } from 'mppx/tempo';
import { describe, expect, it } from 'vitest';
import { loadArtifacts } from '../contracts/compile.js';
import * as abis from './abis.js';

const CONTRACT_OF: Record<string, string> = {
  stablecoinAbi: 'Stablecoin',
  payrollTreasuryAbi: 'PayrollTreasury',
  streamVestingAbi: 'StreamVesting',
  yieldRouterAbi: 'YieldRouter',
  tip403RegistryAbi: 'TIP403Registry',
  addressRegistryAbi: 'AddressRegistry',
  agentIdentityRegistryAbi: 'AgentIdentityRegistry',
  agentReputationRegistryAbi: 'AgentReputationRegistry',
};

// Signatures with mutability and outputs, so a changed return type or a lost `view` is caught too.
const signature = (item: AbiFunction | AbiEvent) =>
  item.type === 'function'
    ? `${formatAbiItem(item)} ${item.stateMutability} -> (${item.outputs.map((o) => o.type).join(',')})`
    : formatAbiItem(item) + item.inputs.map((i) => (i.indexed ? ' i' : ' -')).join('');

describe('hand-written ABIs', () => {
  it('match the compiled contracts, entry by entry', async () => {
    const artifacts = await loadArtifacts();
    for (const [name, contract] of Object.entries(CONTRACT_OF)) {
      const compiled = new Set(
        (artifacts[contract]!.abi as Abi).filter((i) => i.type === 'function' || i.type === 'event').map((i) => signature(i as AbiFunction)),
      );
      for (const item of (abis as unknown as Record<string, Abi>)[name]!) {
        expect(compiled, `${name}: ${signature(item as AbiFunction)}`).toContain(signature(item as AbiFunction));
      }
    }
  });

  it("include mppx's TIP-1034 escrow ABI, served by the embedded escrow entry by entry", async () => {
    const artifacts = await loadArtifacts();
    const compiled = new Set(
      (artifacts.TIP20ChannelEscrow!.abi as Abi).filter((i) => i.type === 'function' || i.type === 'event').map((i) => signature(i as AbiFunction)),
    );
    for (const item of Session.Precompile.escrowAbi as Abi) {
      if (item.type === 'function' || item.type === 'event') expect(compiled).toContain(signature(item as AbiFunction));
    }
  });

  it('name every custom error the contracts raise', async () => {
    const artifacts = await loadArtifacts();
    const known = new Set(abis.contractErrorsAbi.map((e) => formatAbiItem(e)));
    for (const [contract, artifact] of Object.entries(artifacts)) {
      for (const item of artifact.abi.filter((i) => i.type === 'error')) {
        expect(known, `${contract}: ${formatAbiItem(item)}`).toContain(formatAbiItem(item));
      }
    }
  });
});
