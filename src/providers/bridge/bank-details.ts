/**
 * The checks on bank details, in the words a person reads: pure (no imports), so the server's
 * validation (validation.ts) and the portal's bank account form
 * (web/src/pages/portal/components/bankAccountRules.ts) run the very same ones.
 */

export type BankDetailKey = 'routingNumber' | 'accountNumber' | 'iban' | 'clabe' | 'pixKey';

/**
 * Countries whose IBANs SEPA reaches (ISO alpha-2 -> alpha-3; Bridge wants alpha-3). Territories
 * that use another country's IBAN prefix (French overseas, Jersey, ...) are covered by it.
 */
export const SEPA_COUNTRIES: Readonly<Record<string, string>> = {
  AD: 'AND', AL: 'ALB', AT: 'AUT', BE: 'BEL', BG: 'BGR', CH: 'CHE', CY: 'CYP', CZ: 'CZE', DE: 'DEU',
  DK: 'DNK', EE: 'EST', ES: 'ESP', FI: 'FIN', FR: 'FRA', GB: 'GBR', GI: 'GIB', GR: 'GRC', HR: 'HRV',
  HU: 'HUN', IE: 'IRL', IS: 'ISL', IT: 'ITA', LI: 'LIE', LT: 'LTU', LU: 'LUX', LV: 'LVA', MC: 'MCO',
  MD: 'MDA', ME: 'MNE', MK: 'MKD', MT: 'MLT', NL: 'NLD', NO: 'NOR', PL: 'POL', PT: 'PRT', RO: 'ROU',
  SE: 'SWE', SI: 'SVN', SK: 'SVK', SM: 'SMR', VA: 'VAT',
};


/** ABA routing number: weights 3, 7, 1 over the 9 digits sum to a multiple of 10; a Fed district prefix. */
function isAbaRoutingNumber(routing: string): boolean {
  if (!/^\d{9}$/.test(routing)) return false;
  const prefix = Number(routing.slice(0, 2));
  // 01-12 Federal Reserve districts, 21-32 thrifts, 61-72 electronic, 80 traveler's cheques.
  const knownPrefix = (prefix >= 1 && prefix <= 12) || (prefix >= 21 && prefix <= 32) || (prefix >= 61 && prefix <= 72) || prefix === 80;
  const weights = [3, 7, 1, 3, 7, 1, 3, 7, 1];
  const sum = weights.reduce((total, weight, i) => total + weight * Number(routing[i]), 0);
  return knownPrefix && sum % 10 === 0;
}

/** ISO 13616: the country code and check digits moved to the end, letters as 10-35, mod 97 is 1. */
function hasIbanChecksum(iban: string): boolean {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const value = char >= 'A' && char <= 'Z' ? String(char.charCodeAt(0) - 55) : char;
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}

/** CLABE check digit: weights 3, 7, 1 over the first 17 digits, each product mod 10. */
function clabeCheckDigit(clabe: string): number {
  const weights = [3, 7, 1];
  let sum = 0;
  for (let i = 0; i < 17; i += 1) sum += (Number(clabe[i]) * weights[i % 3]!) % 10;
  return (10 - (sum % 10)) % 10;
}

/** An IBAN as it is checked and sent on: without spaces, upper-cased. */
export const normaliseIban = (iban: string) => iban.replace(/ /g, '').toUpperCase();

/** Each detail's problem (after the field's name), or null: the value as sent, present. */
export const BANK_DETAIL_PROBLEM: Readonly<Record<BankDetailKey, (value: string) => string | null>> = {
  routingNumber: (routing) => (!/^\d{9}$/.test(routing) ? 'must be 9 digits' : isAbaRoutingNumber(routing) ? null : 'is not a valid ABA routing number'),
  accountNumber: (account) => (/^\d{4,17}$/.test(account) ? null : 'must be 4-17 digits'),
  iban: (value) => {
    const iban = normaliseIban(value);
    if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) return 'is not an IBAN';
    if (!hasIbanChecksum(iban)) return 'fails the IBAN checksum';
    return SEPA_COUNTRIES[iban.slice(0, 2)] ? null : `is from ${iban.slice(0, 2)}, which SEPA does not reach`;
  },
  clabe: (clabe) => (!/^\d{18}$/.test(clabe) ? 'must be 18 digits' : clabeCheckDigit(clabe) === Number(clabe[17]) ? null : 'has a wrong check digit'),
  pixKey: (key) => (key.length >= 1 && key.length <= 77 && key.trim() === key ? null : 'must be 1-77 characters without surrounding spaces'),
};

/** Bridge names an IBAN's individual owner by first and last name. */
export const sepaOwnerProblem = (owner: string) => (owner.includes(' ') ? null : 'must hold a first and a last name for a SEPA account');
