import { ApiError } from './api';
import { normaliseAmountInput, toUnits, USD_INPUT } from './money';

/**
 * Form checks in the server's own words (src/http/validation.ts gives zod's issues the same plain
 * messages): a form shows every problem at once, before sending, and maps the server's
 * `issues` (every refused field) onto the same fields, each after the field's label.
 */

/** A check on one field's text: the problem in plain words (without the label), or null. */
export type Rule = (value: string) => string | null;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** Rules that pass an empty optional field: only `required` refuses emptiness. */
export const rules = {
  required: ((value) => (value.trim() ? null : 'is required')) as Rule,
  maxLength:
    (max: number): Rule =>
    (value) =>
      value.trim().length > max ? `must be at most ${max} characters` : null,
  email: ((value) => (!value.trim() || EMAIL.test(value.trim()) ? null : 'must be an email address')) as Rule,
  evmAddress: ((value) => (!value.trim() || EVM_ADDRESS.test(value.trim()) ? null : 'must be a 0x-prefixed 20-byte hex address')) as Rule,
  usdAmount: ((value) => {
    const text = value.trim();
    if (!text) return null;
    if (text.startsWith('-')) return 'must be a positive amount, e.g. 1250.50';
    return USD_INPUT.test(normaliseAmountInput(text)) ? null : 'must be an amount in dollars with at most 6 decimal places, e.g. 1250.50';
  }) as Rule,
  /** After `usdAmount`: the server's `positiveUsd` refusal of a valid amount of zero. */
  moreThanZero: ((value) => (toUnits(normaliseAmountInput(value)) === 0n ? 'must be more than 0' : null)) as Rule,
  /** zod's `.int().min(min).max(max)` on a number field, in its words. */
  wholeNumber:
    (min: number, max: number): Rule =>
    (value) => {
      const text = value.trim();
      if (!text) return null;
      const n = Number(text);
      if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(n)) return 'must be a whole number';
      return n < min ? `must be at least ${min}` : n > max ? `must be at most ${max}` : null;
    },
  /** A server rule with its own pattern and words (an identifier's alphabet, a bank number's digits). */
  matches:
    (pattern: RegExp, problem: string): Rule =>
    (value) =>
      !value.trim() || pattern.test(value.trim()) ? null : problem,
};

export interface FieldSpec {
  label: string;
  rules: Rule[];
}

export type FieldErrors<F extends string> = Partial<Record<F, string>>;

/** Every field's first problem, each as "<Label> <problem>". */
export function checkFields<F extends string>(values: Record<F, string>, fields: Record<F, FieldSpec>): FieldErrors<F> {
  const errors: FieldErrors<F> = {};
  for (const name of Object.keys(fields) as F[]) {
    const problem = fields[name].rules.map((rule) => rule(values[name])).find((message) => message !== null);
    if (problem) errors[name] = `${fields[name].label} ${problem}`;
  }
  return errors;
}

/**
 * The server's refusal as field errors of this form ("<Label> <problem>" per refused field), or
 * null when it is not a field refusal this form can show beside a field.
 */
export function serverFieldErrors<F extends string>(error: unknown, fields: Record<F, FieldSpec>): FieldErrors<F> | null {
  if (!(error instanceof ApiError) || error.code !== 'VALIDATION_ERROR') return null;
  const issues = Array.isArray(error.details.issues) ? (error.details.issues as { field: string; message: string }[]) : serviceIssue(error);
  const errors: FieldErrors<F> = {};
  for (const issue of issues) {
    // A form may name a nested field itself ("details.iban"), or by its own name ("pay_day" for
    // "pay_schedule.pay_day"); otherwise the top one holds it.
    const parts = issue.field.split('.');
    const name = [issue.field, parts.at(-1)!, parts[0]!].find((candidate) => candidate in fields) as F | undefined;
    if (name && !errors[name]) errors[name] = `${fields[name].label} ${issue.message}`;
  }
  return Object.keys(errors).length > 0 ? errors : null;
}

/**
 * A service's own 400 (a rule beyond the schema, e.g. a per-day cap below the per-transaction cap)
 * names one field and says "<field>: <problem>"; a nested field may be named in the problem
 * ("details: details.iban fails the IBAN checksum").
 */
function serviceIssue(error: ApiError): { field: string; message: string }[] {
  if (!error.field) return [];
  const problem = error.message.startsWith(`${error.field}: `) ? error.message.slice(error.field.length + 2) : error.message;
  const space = problem.indexOf(' ');
  if (problem.startsWith(`${error.field}.`) && space > 0) return [{ field: problem.slice(0, space), message: problem.slice(space + 1) }];
  return [{ field: error.field, message: problem }];
}
