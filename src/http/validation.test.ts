import { describe, expect, it } from 'vitest';
import { z } from '@hono/zod-openapi';
import { emailSchema, usdAmountSchema, validationError } from './validation.js';

/** What a person reads when a form field is refused: the field, then plain words (the web app puts its own label first). */
function issuesOf(schema: z.ZodType, input: unknown) {
  const result = schema.safeParse(input);
  if (result.success) throw new Error('expected a refusal');
  return validationError(result.error, 'body').details;
}

const Employee = z.object({
  full_name: z.string().trim().min(1).max(200),
  annual_salary_usd: usdAmountSchema,
  email: emailSchema,
  id: z.uuid(),
  limit: z.number().int().min(1).max(100),
  kind: z.enum(['ach', 'sepa']),
  tags: z.array(z.string()).max(2),
});

const valid = {
  full_name: 'Ada',
  annual_salary_usd: '1000',
  email: 'ada@example.com',
  id: '6b3f4b3e-1d2a-4c1e-9b1a-2f3e4d5c6b7a',
  limit: 5,
  kind: 'ach',
  tags: [],
};

describe('validation messages', () => {
  it('names every refused field at once, in plain words', () => {
    const details = issuesOf(Employee, { full_name: 'x'.repeat(201), annual_salary_usd: '-5000', email: 'nope', id: 'x', limit: 0, kind: 'wire', tags: ['a', 'b', 'c'] });
    expect(details).toMatchObject({ field: 'full_name' });
    expect(details.issues).toEqual([
      { field: 'full_name', message: 'must be at most 200 characters' },
      { field: 'annual_salary_usd', message: 'must be a positive amount, e.g. 1250.50' },
      { field: 'email', message: 'must be an email address' },
      { field: 'id', message: 'must be a valid id' },
      { field: 'limit', message: 'must be at least 1' },
      { field: 'kind', message: 'must be one of: ach, sepa' },
      { field: 'tags', message: 'must have at most 2 items' },
    ]);
  });

  it('says a missing or empty field is required, and what type a wrong one must be', () => {
    const { issues } = issuesOf(Employee, { ...valid, full_name: '  ', email: undefined, limit: 'ten' });
    expect(issues).toEqual([
      { field: 'full_name', message: 'is required' },
      { field: 'email', message: 'is required' },
      { field: 'limit', message: 'must be a number' },
    ]);
  });

  it('keeps the amount format message for a malformed positive amount', () => {
    expect(issuesOf(Employee, { ...valid, annual_salary_usd: '12.1234567' }).issues).toEqual([
      { field: 'annual_salary_usd', message: 'must be an amount in dollars with at most 6 decimal places, e.g. 1250.50' },
    ]);
  });
});
