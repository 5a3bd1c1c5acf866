import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import type { JWK } from 'jose';

/**
 * Hand-made JWTs for the auth attack corpus. Signing goes through node:crypto directly, not a JWT
 * library, so a test can put anything in the header (crit, jwk, jku, alg none) that a library
 * would refuse to produce.
 */

export const b64url = (value: string | Buffer | Uint8Array) => Buffer.from(value).toString('base64url');
const json64 = (value: unknown) => b64url(JSON.stringify(value));

export type Claims = Record<string, unknown>;

/** An ES256 signing key: the service's own (read from its JWK file) or a fresh attacker's. */
export interface SigningKey {
  privateKey: KeyObject;
  publicJwk: JWK;
  kid: string | undefined;
}

/** The private JWK a key file holds (the dev identity provider's, or the OAuth signing key). */
export function keyFromFile(file: string): SigningKey {
  const jwk = JSON.parse(fs.readFileSync(file, 'utf8')) as JWK;
  const { d: _private, ...publicJwk } = jwk;
  return { privateKey: createPrivateKey({ key: jwk as never, format: 'jwk' }), publicJwk, kid: jwk.kid };
}

/** A fresh P-256 key nobody trusts. */
export function attackerKey(kid?: string): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey, publicJwk: publicKey.export({ format: 'jwk' }) as JWK, kid };
}

/** `header.payload` as the JWS signing input. */
export const signingInput = (header: Claims, payload: Claims) => `${json64(header)}.${json64(payload)}`;

/** ES256 over the signing input: raw r||s as JWS wants it, or DER when `der` (what some verifiers wrongly accept). */
export function es256(input: string, key: KeyObject, der = false): string {
  return b64url(sign('sha256', Buffer.from(input), { key, dsaEncoding: der ? 'der' : 'ieee-p1363' }));
}

/** A compact JWS signed with `key` (ES256 unless the header says otherwise; the signature is ES256 either way). */
export function jws(header: Claims, payload: Claims, key: SigningKey, options: { der?: boolean } = {}): string {
  const input = signingInput({ alg: 'ES256', ...(key.kid !== undefined && { kid: key.kid }), ...header }, payload);
  return `${input}.${es256(input, key.privateKey, options.der)}`;
}

/** HS256 "signed" with a public value as the secret (the classic algorithm confusion). */
export function hs256(header: Claims, payload: Claims, secret: string | Buffer): string {
  const input = signingInput({ ...header, alg: 'HS256' }, payload);
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

/** The secrets an HS256 confusion attack tries: the public key as PEM, as DER (SPKI) and as its JWK JSON. */
export function publicKeySecrets(publicJwk: JWK): { pem: string; der: Buffer; jwk: string } {
  const key = createPublicKey({ key: publicJwk as never, format: 'jwk' });
  return { pem: key.export({ type: 'spki', format: 'pem' }).toString(), der: key.export({ type: 'spki', format: 'der' }), jwk: JSON.stringify(publicJwk) };
}

/** The same token with its payload replaced, keeping the original header and signature. */
export function withPayload(token: string, payload: Claims): string {
  const [header, , signature] = token.split('.');
  return `${header}.${json64(payload)}.${signature}`;
}

/** The same token with its header replaced, keeping the original payload and signature. */
export function withHeader(token: string, header: Claims): string {
  const [, payload, signature] = token.split('.');
  return `${json64(header)}.${payload}.${signature}`;
}

export const decodePart = (token: string, index: 0 | 1): Claims => JSON.parse(Buffer.from(token.split('.')[index]!, 'base64url').toString()) as Claims;
