import { readFileSync } from 'node:fs';
import { SaxesParser } from 'saxes';

/**
 * The sanctions list the service screens against: every EVM-format address OFAC's SDN list carries
 * as a "Digital Currency Address", under whatever asset (ETH, USDT, ARB, BSC...). Two sources: the
 * snapshot shipped with the service, and the official `sdn_advanced.xml` fetched by the refresh
 * (sanctions-sync.ts). docs/decisions.md, "Sanctions list".
 */
export interface SanctionsList {
  /** Where the list came from: the snapshot's name or the URL it was fetched from. */
  source: string;
  /** The publication date the list carries (YYYY-MM-DD), when it says. */
  listDate: string | null;
  /** Lower-cased addresses, each once, with the assets it is listed under. */
  entries: { address: string; reason: string }[];
}

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const SNAPSHOT_FILE = 'ofac-sdn-evm-addresses-2024-09-27.csv';

/** Collects (address, asset) pairs into one entry per address, its reason naming every asset. */
function entriesOf(pairs: Iterable<{ address: string; asset: string }>): SanctionsList['entries'] {
  const assets = new Map<string, Set<string>>();
  for (const { address, asset } of pairs) {
    if (!EVM_ADDRESS.test(address)) continue;
    const key = address.toLowerCase();
    assets.set(key, (assets.get(key) ?? new Set()).add(asset));
  }
  return [...assets].map(([address, listed]) => ({ address, reason: `OFAC SDN: Digital Currency Address - ${[...listed].sort().join(', ')}` }));
}

/** The snapshot shipped with the service: OFAC's SDN list as of 2024-09-27 (`asset,address` CSV). */
export function sanctionsSnapshot(): SanctionsList {
  const text = readFileSync(new URL(`./${SNAPSHOT_FILE}`, import.meta.url), 'utf8');
  const [header, ...rows] = text.trim().split(/\r?\n/);
  if (header !== 'asset,address') throw new Error(`${SNAPSHOT_FILE}: unexpected header ${header}`);
  const pairs = rows.map((row) => {
    const [asset = '', address = ''] = row.split(',');
    return { asset: asset.trim(), address: address.trim() };
  });
  return { source: `OFAC SDN list, snapshot (${SNAPSHOT_FILE})`, listDate: '2024-09-27', entries: entriesOf(pairs) };
}

const FEATURE_TYPE = /^Digital Currency Address - (.+)$/;

/**
 * Reads OFAC's `sdn_advanced.xml` as it streams in: `FeatureType` elements name the digital
 * currency feature types (`Digital Currency Address - <ASSET>`, by `ID`); each `Feature` of such a
 * type (`FeatureTypeID`) holds an address as the text of its `VersionDetail`. Throws on malformed
 * XML, or on a file with no digital currency feature types (not the SDN advanced export).
 */
export async function parseSdnAdvanced(chunks: AsyncIterable<string> | Iterable<string>, source: string): Promise<SanctionsList> {
  const parser = new SaxesParser({ xmlns: false });
  const assetOfType = new Map<string, string>();
  const features: { typeId: string; value: string }[] = [];
  const date: Record<string, string> = {};
  let text = '';
  let featureTypeId: string | null = null;
  let typeOfFeature: string | null = null;
  const path: string[] = [];
  let failure: Error | null = null;

  const local = (name: string) => name.slice(name.indexOf(':') + 1);
  parser.on('error', (error) => {
    failure ??= error;
  });
  parser.on('opentag', (tag) => {
    const name = local(tag.name);
    path.push(name);
    text = '';
    if (name === 'FeatureType') featureTypeId = String(tag.attributes.ID ?? '');
    if (name === 'Feature') typeOfFeature = String(tag.attributes.FeatureTypeID ?? '');
  });
  parser.on('text', (chunk) => {
    text += chunk;
  });
  parser.on('closetag', (tag) => {
    const name = local(tag.name);
    path.pop();
    if (name === 'FeatureType' && featureTypeId !== null) {
      const asset = FEATURE_TYPE.exec(text.trim())?.[1];
      if (asset) assetOfType.set(featureTypeId, asset.trim());
      featureTypeId = null;
    }
    if (name === 'VersionDetail' && typeOfFeature) features.push({ typeId: typeOfFeature, value: text.trim() });
    if (name === 'Feature') typeOfFeature = null;
    // The publication's date: the root's DateOfIssue/{Year,Month,Day} (deeper, these names date other things).
    if (path.length === 2 && path[1] === 'DateOfIssue' && (name === 'Year' || name === 'Month' || name === 'Day')) date[name] = text.trim();
  });

  for await (const chunk of chunks) {
    parser.write(chunk);
    if (failure) break;
  }
  if (!failure) parser.close();
  if (failure) throw new Error(`not well-formed XML: ${(failure as Error).message}`);
  if (assetOfType.size === 0) throw new Error('no "Digital Currency Address" feature types: not the SDN advanced export');

  const pairs = features.flatMap(({ typeId, value }) => {
    const asset = assetOfType.get(typeId);
    return asset ? [{ address: value, asset }] : [];
  });
  const listDate = date.Year && date.Month && date.Day ? `${date.Year}-${date.Month.padStart(2, '0')}-${date.Day.padStart(2, '0')}` : null;
  return { source, listDate, entries: entriesOf(pairs) };
}
