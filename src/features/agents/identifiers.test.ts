import { generateKeyPairSync } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import { describe, expect, it } from 'vitest';
import { breaksEvmAddressRule, normaliseIdentifier, parseAgentIdentifier } from './identifiers.js';

const solanaKey = () => getBase58Decoder().decode(Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url'));

describe('agent identifiers', () => {
  it('name an ERC-8004 agent, a Solana key or an EVM address in one canonical spelling each', () => {
    const key = solanaKey();
    expect(parseAgentIdentifier('erc8004:tempo:42')).toEqual({ kind: 'erc8004', canonical: 'erc8004:eip155:4217:42', agentId: 42n });
    expect(parseAgentIdentifier('erc8004:eip155:4217:42').canonical).toBe('erc8004:eip155:4217:42');
    expect(parseAgentIdentifier(`solana:${key}`)).toEqual({ kind: 'solana', canonical: `solana:${key}`, publicKey: key });
    expect(parseAgentIdentifier(key).canonical).toBe(`solana:${key}`);
    expect(parseAgentIdentifier('0x5FbDB2315678afecb367f032d93F642f64180aa3')).toMatchObject({ kind: 'evm', canonical: '0x5fbdb2315678afecb367f032d93f642f64180aa3' });
  });

  it('leave every other form opaque (proven by HMAC only)', () => {
    // A 44-character key: one more character always decodes to 33 bytes (a random key may have 43,
    // and 43 + 1 characters can still be 32 bytes).
    const key = '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T';
    for (const other of [
      'erc8004:eip155:1:42', // another chain
      'erc8004:tempo:042', // a second spelling of 42
      'erc8004:tempo:-1',
      `erc8004:tempo:${1n << 256n}`, // beyond uint256
      'solana:abc',
      `solana:${key}x`,
      '0x5FbDB2315678afecb367f032d93F642f64180aa',
      'https://agent.example/card.json',
      'buyer-bot-7',
    ]) {
      expect(parseAgentIdentifier(other), other).toEqual({ kind: 'opaque', canonical: other });
    }
  });

  it('are matched exactly, except that EVM addresses ignore case', () => {
    expect(normaliseIdentifier('0xABCDEF0123456789ABCDEF0123456789ABCDEF01')).toBe('0xabcdef0123456789abcdef0123456789abcdef01');
    expect(normaliseIdentifier('0x5FbDB2315678afecb367f032d93F642f64180aa3')).toBe('0x5fbdb2315678afecb367f032d93f642f64180aa3');
    expect(normaliseIdentifier('Buyer-Bot ')).toBe('Buyer-Bot ');
  });

  it('follow the EVM address rule: an address in one case names its checksummed address, a wrong checksum is refused', () => {
    expect(parseAgentIdentifier('0x5FBDB2315678AFECB367F032D93F642F64180AA3')).toEqual({
      kind: 'evm',
      canonical: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
      address: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
    });
    expect(breaksEvmAddressRule('0x5fbDB2315678afecb367f032d93F642f64180aa3')).toBe(true);
    expect(breaksEvmAddressRule('0x5FbDB2315678afecb367f032d93F642f64180aa3')).toBe(false);
    expect(breaksEvmAddressRule('buyer-bot-7')).toBe(false);
  });
});
