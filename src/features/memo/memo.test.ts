import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { railA, x402 } from '../../../test/support/pay.js';
import { decodeMemo, encodeMemo, MEMO_TYPES, recordHash } from './codec.js';

const input = {
  type: 'salary' as const,
  employerId: randomUUID(),
  employeeId: randomUUID(),
  runId: randomUUID(),
  amount: 8_333_330_000n,
  payPeriodStart: new Date('2026-11-01T00:00:00Z'),
  payPeriodEnd: new Date('2026-11-30T00:00:00Z'),
  costCentre: 'ENG-42',
};

describe('memo codec', () => {
  it('round-trips every field of the layout', () => {
    const memo = encodeMemo(input);
    expect(memo).toMatch(/^0x[0-9a-f]{64}$/);
    expect(memo.slice(0, 4)).toBe('0x50'); // magic
    expect(decodeMemo(memo)).toEqual({
      version: 1,
      type: 'salary',
      employer_tag: expect.stringMatching(/^0x[0-9a-f]{8}$/),
      employee_tag: expect.stringMatching(/^0x[0-9a-f]{8}$/),
      pay_period_start: '2026-11-01',
      pay_period_end: '2026-11-30',
      cost_centre_tag: expect.stringMatching(/^0x[0-9a-f]{4}$/),
      record_hash: `0x${Buffer.from(recordHash(input.runId, input.employeeId, input.amount)).toString('hex')}`,
    });
    // Optional parts encode as zero and decode as null.
    const bare = decodeMemo(encodeMemo({ ...input, type: 'advance', payPeriodStart: null, payPeriodEnd: null, costCentre: null }));
    expect(bare).toMatchObject({ type: 'advance', pay_period_start: null, pay_period_end: null, cost_centre_tag: null });
  });

  it('binds the memo to the run, the employee and the amount', () => {
    const memo = encodeMemo(input);
    expect(encodeMemo({ ...input, amount: input.amount + 1n })).not.toBe(memo);
    expect(encodeMemo({ ...input, runId: randomUUID() })).not.toBe(memo);
    expect(encodeMemo(input)).toBe(memo);
  });

  it('answers null for 32 bytes that are not ours, including any altered memo', () => {
    const memo = encodeMemo(input);
    expect(decodeMemo(`0x${'00'.repeat(32)}`)).toBeNull();
    expect(decodeMemo(`0x${randomBytes(32).toString('hex')}` as Hex)).toBeNull();
    // Flip each byte in turn: the checksum (or magic/version/type) notices every one.
    for (let i = 0; i < 32; i++) {
      const bytes = Buffer.from(memo.slice(2), 'hex');
      bytes[i] = bytes[i]! ^ 0x01;
      expect(decodeMemo(`0x${bytes.toString('hex')}`), `byte ${i}`).toBeNull();
    }
    // An unknown message type is not ours even with a valid checksum.
    const unknownType = Buffer.from(memo.slice(2), 'hex');
    unknownType[1] = 0x1f;
    createHash('sha256').update(unknownType.subarray(0, 28)).digest().copy(unknownType, 28, 0, 4);
    expect(Object.values(MEMO_TYPES)).not.toContain(0x0f);
    expect(decodeMemo(`0x${unknownType.toString('hex')}`)).toBeNull();
  });

  it('accepts upper-case hex and refuses malformed input', () => {
    const memo = encodeMemo(input);
    expect(decodeMemo(memo.toUpperCase().replace('0X', '0x') as Hex)).toEqual(decodeMemo(memo));
    expect(() => decodeMemo('0x1234')).toThrow();
  });
});

describe('POST /api/mpp/memo/decode', () => {
  let t: TestApp;
  let server: LoopbackServer;
  beforeAll(async () => {
    t = await startTestApp({}, { chains: true });
    server = await serveOnLoopback(t.app.fetch);
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });

  it('decodes for a payer on rail A and on rail B; a foreign memo gives fields null', async () => {
    const memo = encodeMemo(input);
    const { pay } = await railA(t, server.url);
    const paid = await pay('/api/mpp/memo/decode', { method: 'POST', body: { memo } });
    expect(paid.status).toBe(200);
    expect(await paid.json()).toEqual({ memo, fields: decodeMemo(memo) });

    const onBase = await x402(t, server.url, 'B');
    const foreign = `0x${'ab'.repeat(32)}`;
    const response = await onBase.pay('/api/mpp/memo/decode', { method: 'POST', body: { memo: foreign } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ memo: foreign, fields: null });
  });

  it('answers 402 unpaid and 400 naming memo for malformed memos', async () => {
    expect((await fetch(`${server.url}/api/mpp/memo/decode`, { method: 'POST', body: '{}' })).status).toBe(402);
    const { pay } = await railA(t, server.url);
    for (const body of [{}, { memo: '0x12' }, { memo: `0x${'g'.repeat(64)}` }, { memo: 'ab'.repeat(33) }, { memo: 5 }]) {
      const response = await pay('/api/mpp/memo/decode', { method: 'POST', body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'VALIDATION_ERROR', field: 'memo' });
    }
  });
});
