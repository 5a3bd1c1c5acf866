import { BridgeError, DESTINATION_TYPES, type DestinationType } from './provider.js';

/**
 * Bank details per destination type, checked the same way by both adapters before anything is
 * stored or sent: a typo in an account number must fail here, not days later as a returned payment.
 */

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

export interface ExternalAccountInput {
  destinationType: DestinationType;
  accountOwnerName: string;
  details: Record<string, string>;
}

export interface ValidatedExternalAccount {
  /** The details as they should be sent on (an IBAN without spaces, upper-cased). */
  details: Record<string, string>;
  last4: string;
}

/** Checks an external account; throws BridgeError('invalid') naming the first bad field. */
export function validateExternalAccount(input: ExternalAccountInput): ValidatedExternalAccount {
  if (!DESTINATION_TYPES.includes(input.destinationType)) {
    throw invalid('destinationType', `must be one of ${DESTINATION_TYPES.join(', ')}`);
  }
  const owner = typeof input.accountOwnerName === 'string' ? input.accountOwnerName.trim() : '';
  if (owner.length === 0 || owner.length > 256) throw invalid('accountOwnerName', 'must be 1-256 characters');

  const details = { ...input.details };
  switch (input.destinationType) {
    case 'ach': {
      const routing = field(details, 'routingNumber');
      if (!/^\d{9}$/.test(routing)) throw invalid('details.routingNumber', 'must be 9 digits');
      if (!isAbaRoutingNumber(routing)) throw invalid('details.routingNumber', 'is not a valid ABA routing number');
      const account = field(details, 'accountNumber');
      if (!/^\d{4,17}$/.test(account)) throw invalid('details.accountNumber', 'must be 4-17 digits');
      return { details, last4: account.slice(-4) };
    }
    case 'sepa': {
      const iban = field(details, 'iban').replace(/ /g, '').toUpperCase();
      if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) throw invalid('details.iban', 'is not an IBAN');
      if (!hasIbanChecksum(iban)) throw invalid('details.iban', 'fails the IBAN checksum');
      if (!SEPA_COUNTRIES[iban.slice(0, 2)]) throw invalid('details.iban', `is from ${iban.slice(0, 2)}, which SEPA does not reach`);
      // Bridge names an IBAN's individual owner by first and last name.
      if (!owner.includes(' ')) throw invalid('accountOwnerName', 'must hold a first and a last name for a SEPA account');
      details.iban = iban;
      return { details, last4: iban.slice(-4) };
    }
    case 'spei': {
      const clabe = field(details, 'clabe');
      if (!/^\d{18}$/.test(clabe)) throw invalid('details.clabe', 'must be 18 digits');
      if (clabeCheckDigit(clabe) !== Number(clabe[17])) throw invalid('details.clabe', 'has a wrong check digit');
      return { details, last4: clabe.slice(-4) };
    }
    case 'pix': {
      const key = field(details, 'pixKey');
      if (key.length < 1 || key.length > 77 || key.trim() !== key) {
        throw invalid('details.pixKey', 'must be 1-77 characters without surrounding spaces');
      }
      return { details, last4: key.slice(-4) };
    }
  }
}

/** ABA routing number: weights 3, 7, 1 over the 9 digits sum to a multiple of 10; a Fed district prefix. */
export function isAbaRoutingNumber(routing: string): boolean {
  if (!/^\d{9}$/.test(routing)) return false;
  const prefix = Number(routing.slice(0, 2));
  // 01-12 Federal Reserve districts, 21-32 thrifts, 61-72 electronic, 80 traveler's cheques.
  const knownPrefix = (prefix >= 1 && prefix <= 12) || (prefix >= 21 && prefix <= 32) || (prefix >= 61 && prefix <= 72) || prefix === 80;
  const weights = [3, 7, 1, 3, 7, 1, 3, 7, 1];
  const sum = weights.reduce((total, weight, i) => total + weight * Number(routing[i]), 0);
  return knownPrefix && sum % 10 === 0;
}

/** ISO 13616: the country code and check digits moved to the end, letters as 10-35, mod 97 is 1. */
export function hasIbanChecksum(iban: string): boolean {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const value = char >= 'A' && char <= 'Z' ? String(char.charCodeAt(0) - 55) : char;
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}

/** CLABE check digit: weights 3, 7, 1 over the first 17 digits, each product mod 10. */
export function clabeCheckDigit(clabe: string): number {
  const weights = [3, 7, 1];
  let sum = 0;
  for (let i = 0; i < 17; i += 1) sum += (Number(clabe[i]) * weights[i % 3]!) % 10;
  return (10 - (sum % 10)) % 10;
}

function field(details: Record<string, string>, name: string): string {
  const value = details[name];
  if (typeof value !== 'string' || value.length === 0) throw invalid(`details.${name}`, 'is required');
  return value;
}

const invalid = (field: string, problem: string) => new BridgeError('invalid', `${field} ${problem}`);
