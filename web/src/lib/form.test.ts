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
