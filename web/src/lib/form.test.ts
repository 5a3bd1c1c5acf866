import { describe, expect, it } from 'vitest';
import { ApiError } from './api';
import { checkFields, rules, serverFieldErrors } from './form';

const FIELDS = {
  full_name: { label: 'Full name', rules: [rules.required, rules.maxLength(200)] },
  email: { label: 'Email', rules: [rules.required, rules.email] },
  wallet_address: { label: 'Wallet address', rules: [rules.evmAddress] },
  annual_salary_usd: { label: 'Salary', rules: [rules.usdAmount] },
};

describe('checkFields', () => {
  it("gives every field's problem at once, label first, in the server's words", () => {
    expect(checkFields({ full_name: 'x'.repeat(201), email: 'nope', wallet_address: '0x12', annual_salary_usd: '-5000' }, FIELDS)).toEqual({
      full_name: 'Full name must be at most 200 characters',
      email: 'Email must be an email address',
      wallet_address: 'Wallet address must be a 0x-prefixed 20-byte hex address',
      annual_salary_usd: 'Salary must be a positive amount, e.g. 1250.50',
    });
  });

  it('passes empty optional fields and valid input; requires the required ones', () => {
    expect(checkFields({ full_name: 'Ada', email: 'ada@example.com', wallet_address: '', annual_salary_usd: '$95,000.50' }, FIELDS)).toEqual({});
    expect(checkFields({ full_name: '  ', email: '', wallet_address: '', annual_salary_usd: '1.1234567' }, FIELDS)).toEqual({
      full_name: 'Full name is required',
      email: 'Email is required',
      annual_salary_usd: 'Salary must be an amount in dollars with at most 6 decimal places, e.g. 1250.50',
    });
  });
});

describe('serverFieldErrors', () => {
  it("maps every refused field of the server's 400 onto the form's labels", () => {
    const refusal = new ApiError(400, 'VALIDATION_ERROR', 'full_name: must be at most 200 characters', 'full_name', {
      issues: [
        { field: 'full_name', message: 'must be at most 200 characters' },
        { field: 'annual_salary_usd', message: 'must be a positive amount, e.g. 1250.50' },
      ],
    });
    expect(serverFieldErrors(refusal, FIELDS)).toEqual({
      full_name: 'Full name must be at most 200 characters',
      annual_salary_usd: 'Salary must be a positive amount, e.g. 1250.50',
    });
  });

  it('leaves other refusals to the form (null): another code, or fields the form does not have', () => {
    expect(serverFieldErrors(new ApiError(409, 'EMPLOYEE_REMOVED', 'Removed.'), FIELDS)).toBeNull();
    expect(serverFieldErrors(new ApiError(400, 'VALIDATION_ERROR', 'x', 'department', { issues: [{ field: 'department', message: 'is required' }] }), FIELDS)).toBeNull();
    expect(serverFieldErrors(new Error('network'), FIELDS)).toBeNull();
  });
});

describe('rules for amounts above zero, whole numbers and patterns', () => {
  const CAPS = {
    cap: { label: 'Per-transaction cap', rules: [rules.required, rules.usdAmount, rules.moreThanZero] },
    velocity: { label: 'Payments per minute', rules: [rules.required, rules.wholeNumber(1, 600)] },
    digits: { label: 'Routing number', rules: [rules.matches(/^\d{9}$/, 'must be 9 digits')] },
  };

  it("says each problem in the server's words (positiveUsd, zod's int/min/max, a schema's own pattern message)", () => {
    expect(checkFields({ cap: '0.00', velocity: '2.5', digits: '12345' }, CAPS)).toEqual({
      cap: 'Per-transaction cap must be more than 0',
      velocity: 'Payments per minute must be a whole number',
      digits: 'Routing number must be 9 digits',
    });
    expect(checkFields({ cap: 'abc', velocity: '0', digits: '' }, CAPS)).toEqual({
      cap: 'Per-transaction cap must be an amount in dollars with at most 6 decimal places, e.g. 1250.50',
      velocity: 'Payments per minute must be at least 1',
    });
    expect(checkFields({ cap: '$1,000', velocity: '601', digits: '021000021' }, CAPS)).toEqual({ velocity: 'Payments per minute must be at most 600' });
    expect(checkFields({ cap: '0.000001', velocity: '600', digits: ' 021000021 ' }, CAPS)).toEqual({});
  });
});

describe("serverFieldErrors on a service's own 400 (one field, no issues list)", () => {
  const BANK = {
    accountOwnerName: { label: 'Account holder name', rules: [rules.required] },
    'details.iban': { label: 'IBAN', rules: [rules.required] },
    per_day_cap_usd: { label: 'Per-day cap', rules: [] },
  };

  it('maps the named field, or the nested field the problem names', () => {
    const cap = new ApiError(400, 'VALIDATION_ERROR', 'per_day_cap_usd: must be at least the per-transaction cap', 'per_day_cap_usd', { field: 'per_day_cap_usd' });
    expect(serverFieldErrors(cap, BANK)).toEqual({ per_day_cap_usd: 'Per-day cap must be at least the per-transaction cap' });
    const iban = new ApiError(400, 'VALIDATION_ERROR', 'details: details.iban fails the IBAN checksum', 'details', { field: 'details' });
    expect(serverFieldErrors(iban, BANK)).toEqual({ 'details.iban': 'IBAN fails the IBAN checksum' });
    const nested = new ApiError(400, 'VALIDATION_ERROR', 'invalid', 'pay_schedule.pay_day', { issues: [{ field: 'pay_schedule.pay_day', message: 'must be at most 31' }] });
    expect(serverFieldErrors(nested, { pay_day: { label: 'Pay day', rules: [] } })).toEqual({ pay_day: 'Pay day must be at most 31' });
    const unknown = new ApiError(400, 'VALIDATION_ERROR', 'publish_now: send either publish_now or published_at', 'publish_now', { field: 'publish_now' });
    expect(serverFieldErrors(unknown, BANK)).toBeNull();
  });
});
