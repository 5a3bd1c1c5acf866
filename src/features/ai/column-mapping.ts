import { isAddress } from '@solana/kit';
import { EVM_ADDRESS_PATTERN } from '../../chains/evm/address.js';
import { CSV_FIELDS, type CsvField } from './schema.js';

/**
 * The deterministic CSV column mapping: each header scored for each bulk-import field by its
 * words (synonyms, keywords) and by its sample values (emails, 0x addresses, base58 keys, amounts,
 * person names), then fields and columns paired greedily, best score first.
 */

export type ColumnMapping = Record<CsvField, string | null>;

export interface MappingResult {
  mapping: ColumnMapping;
  confidence: Record<CsvField, number>;
  unmapped_columns: string[];
}

/** Below this a column is left unmapped rather than guessed. */
const MIN_SCORE = 0.5;
const EXACT = 0.95;

/** Whole headers (words joined, see `compact`) that name a field. */
const SYNONYMS: Record<CsvField, readonly string[]> = {
  email: ['email', 'emailaddress', 'mail', 'workemail', 'businessemail', 'companyemail', 'officeemail', 'emailid', 'contactemail', 'eaddress'],
  full_name: [
    'name', 'fullname', 'employee', 'employeename', 'legalname', 'displayname', 'staffname', 'payee', 'payeename', 'worker',
    'workername', 'person', 'member', 'membername', 'contractor', 'contractorname', 'firstandlastname',
  ],
  wallet_address: [
    'wallet', 'walletaddress', '0xaddress', '0xwallet', 'evmwallet', 'evmaddress', 'evmwalletaddress', 'ethwallet', 'ethaddress',
    'ethereumaddress', 'ethereumwallet', 'payoutwallet', 'payoutaddress', 'tempowallet', 'tempoaddress', 'usdcwallet',
    'usdcaddress', 'basewallet', 'baseaddress', 'cryptowallet', 'cryptoaddress', 'receivingaddress', 'receivingwallet',
    'publicaddress', 'payoutwalletaddress',
  ],
  solana_wallet_address: [
    'solana', 'solanawallet', 'solanaaddress', 'solanawalletaddress', 'solwallet', 'soladdress', 'phantom', 'phantomwallet',
    'phantomaddress', 'solanapubkey', 'solanapublickey', 'splwallet', 'spladdress',
  ],
  annual_salary_usd: [
    'salary', 'annualsalary', 'basesalary', 'yearlysalary', 'salaryperyear', 'salarypa', 'annualpay', 'pay', 'basepay',
    'annualcomp', 'annualcompensation', 'compensation', 'comp', 'totalcomp', 'grosssalary', 'grossannualsalary', 'wage',
    'annualwage', 'ctc', 'remuneration', 'annualremuneration',
  ],
  department: [
    'department', 'dept', 'dep', 'departmentname', 'team', 'division', 'businessunit', 'bu', 'function', 'org', 'organisation',
    'organization', 'orgunit', 'group', 'unit',
  ],
  cost_centre: [
    'costcentre', 'costcenter', 'cc', 'costcentrecode', 'costcentercode', 'costcode', 'costcentreid', 'costcenterid', 'glcode',
    'budgetcode', 'chargecode', 'costunit', 'costcentrenumber', 'costcenternumber', 'costctr',
  ],
};

/** Words that qualify a header without naming its field: "Salary (USD)", "Employee email". */
const NOISE = new Set(['usd', 'us', 'dollar', 'dollars', 'the', 'of', 'employee', 'employees', 'staff', 'primary', 'current']);

/** Words that say a name column is someone else's name, or only part of one. */
const NOT_FULL_NAME = new Set([
  'first', 'last', 'given', 'family', 'surname', 'middle', 'user', 'username', 'company', 'employer', 'department', 'dept',
  'team', 'file', 'bank', 'account', 'cost', 'manager', 'supervisor', 'lead', 'approver', 'reports', 'emergency', 'contact',
  'spouse', 'beneficiary', 'job', 'title', 'role', 'position',
]);
/** Words that say a pay column is not an annual salary. */
const NOT_ANNUAL = new Set([
  'monthly', 'month', 'hourly', 'hour', 'weekly', 'week', 'daily', 'bonus', 'frequency', 'date', 'period', 'grade', 'band',
  'type', 'currency', 'method', 'schedule', 'day',
]);
const SOLANA_WORDS = ['solana', 'sol', 'phantom', 'spl'];
const EVM_WORDS = ['evm', 'eth', 'ethereum', '0x', 'erc20', 'tempo', 'base', 'usdc', 'payout'];

/** A header's words: accents dropped, camelCase split, lower case, anything else a separator. */
export function headerWords(header: string): string[] {
  return header
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '');
}

const compact = (words: string[]) => words.join('');
const hasAny = (words: string[], set: Iterable<string>) => [...set].some((w) => words.includes(w));

/** How strongly a header's words alone name a field, 0 to 1. */
function nameScore(words: string[], field: CsvField): number {
  const meaningful = words.filter((w) => !NOISE.has(w));
  if (SYNONYMS[field].includes(compact(words)) || SYNONYMS[field].includes(compact(meaningful))) return EXACT;
  const joined = compact(words);
  switch (field) {
    case 'email':
      return hasAny(words, ['email', 'mail']) || joined.includes('email') ? 0.8 : 0;
    case 'full_name':
      return words.includes('name') && !hasAny(words, NOT_FULL_NAME) ? 0.75 : 0;
    case 'wallet_address':
      if (hasAny(words, SOLANA_WORDS)) return 0;
      if (words.includes('wallet') || (words.includes('address') && hasAny(words, EVM_WORDS))) return 0.75;
      // "Address" alone is as often a postal address: only the values can tell.
      return words.includes('address') ? 0.4 : 0;
    case 'solana_wallet_address':
      return hasAny(words, SOLANA_WORDS) ? 0.85 : 0;
    case 'annual_salary_usd':
      if (hasAny(words, NOT_ANNUAL)) return 0;
      if (hasAny(words, ['salary', 'compensation', 'comp', 'pay', 'wage', 'wages', 'remuneration', 'ctc'])) return 0.75;
      return words.includes('amount') ? 0.55 : 0;
    case 'department':
      return hasAny(words, ['department', 'dept', 'division', 'team']) ? 0.8 : 0;
    case 'cost_centre':
      return (words.includes('cost') && hasAny(words, ['centre', 'center', 'code', 'ctr'])) || joined.includes('costcent') ? 0.85 : 0;
  }
}

type ValueKind = 'email' | 'evm' | 'solana' | 'amount' | 'person' | 'text';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** "$120,000", "120000.50", "USD 95k", "95 000 USD". */
const AMOUNT = /^(?:usd|us\$|\$)?\s*\d{1,3}(?:[,\s]?\d{3})*(?:\.\d+)?\s*k?\s*(?:usd)?$/i;
/** Two or more words of letters: "Ada Lovelace", "O'Neil, Mary-Jane". */
const PERSON = /^\p{L}[\p{L}'’.-]*(?:,?\s+\p{L}[\p{L}'’.-]*)+$/u;

function valueKind(value: string): ValueKind {
  if (EMAIL.test(value)) return 'email';
  // By shape only: a wallet column is found even where a row's checksum is wrong; the import refuses that row with the address rule.
  if (EVM_ADDRESS_PATTERN.test(value)) return 'evm';
  if (AMOUNT.test(value)) return 'amount';
  if (isAddress(value)) return 'solana';
  if (PERSON.test(value)) return 'person';
  return 'text';
}

/** The kind of at least 80% of the column's non-blank samples; null with no samples or no majority. */
function columnKind(values: string[]): ValueKind | null {
  const present = values.map((v) => v.trim()).filter((v) => v !== '');
  if (present.length === 0) return null;
  const counts = new Map<ValueKind, number>();
  for (const value of present) {
    const kind = valueKind(value);
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  for (const [kind, count] of counts) if (count >= 0.8 * present.length) return kind;
  return null;
}

/** The kind of values each field holds, and how far such values alone point to it. */
const FIELD_VALUES: Partial<Record<CsvField, { kind: ValueKind; alone: number }>> = {
  email: { kind: 'email', alone: 0.9 },
  wallet_address: { kind: 'evm', alone: 0.9 },
  solana_wallet_address: { kind: 'solana', alone: 0.9 },
  // Numbers alone could be ids or codes; they only support a salary-like header.
  annual_salary_usd: { kind: 'amount', alone: 0 },
  full_name: { kind: 'person', alone: 0.55 },
};
/** Kinds no other field's values can be mistaken for. */
const DISTINCT_KINDS = new Set<ValueKind>(['email', 'evm', 'solana']);

function score(words: string[], kind: ValueKind | null, field: CsvField): number {
  const byName = nameScore(words, field);
  if (kind === null) return byName;
  const expected = FIELD_VALUES[field];
  if (expected?.kind === kind) {
    if (field === 'full_name' && hasAny(words, NOT_FULL_NAME)) return 0;
    // Header and values agree: more sure than either alone.
    return byName > 0 ? Math.min(0.99, Math.max(byName, expected.alone) + 0.04) : expected.alone;
  }
  // "Wallet" holding base58 keys is the Solana wallet; "Email" holding names is not an email.
  if (DISTINCT_KINDS.has(kind)) return byName * 0.3;
  return expected ? byName * 0.5 : byName;
}

/** The heuristic mapping of these headers given these sample rows (cells in header order). */
export function mapColumns(headers: string[], sampleRows: string[][] = []): MappingResult {
  const candidates: { field: CsvField; column: number; score: number }[] = [];
  headers.forEach((header, column) => {
    const words = headerWords(header);
    const kind = columnKind(sampleRows.map((row) => row[column] ?? ''));
    CSV_FIELDS.forEach((field) => {
      const s = score(words, kind, field);
      if (s >= MIN_SCORE) candidates.push({ field, column, score: s });
    });
  });
  // Stable sort: equal scores keep field order, then header order, so the answer is deterministic.
  candidates.sort((a, b) => b.score - a.score);

  const mapping = emptyMapping<string | null>(null);
  const confidence = emptyMapping(0);
  const used = new Set<number>();
  for (const { field, column, score: s } of candidates) {
    if (mapping[field] !== null || used.has(column)) continue;
    mapping[field] = headers[column]!;
    confidence[field] = Math.round(s * 100) / 100;
    used.add(column);
  }
  return { mapping, confidence, unmapped_columns: headers.filter((_, column) => !used.has(column)) };
}

export function emptyMapping<T>(value: T): Record<CsvField, T> {
  return Object.fromEntries(CSV_FIELDS.map((field) => [field, value])) as Record<CsvField, T>;
}

/**
 * A model's mapping, if it only names given headers and none twice (missing fields are null);
 * otherwise null, and the caller keeps the heuristic.
 */
export function checkedModelMapping(headers: string[], answer: Partial<Record<CsvField, string | null | undefined>>): ColumnMapping | null {
  const known = new Set(headers);
  const used = new Set<string>();
  const mapping = emptyMapping<string | null>(null);
  for (const field of CSV_FIELDS) {
    const header = answer[field];
    if (header === undefined || header === null) continue;
    if (!known.has(header) || used.has(header)) return null;
    used.add(header);
    mapping[field] = header;
  }
  return mapping;
}
