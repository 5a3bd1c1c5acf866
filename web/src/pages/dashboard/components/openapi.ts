/** The parts of `GET /api/openapi.json` the API access page reads. */
export interface OpenApiDocument {
  info?: { title?: string; version?: string };
  servers?: { url: string }[];
  paths?: Record<string, Record<string, OpenApiOperation | unknown>>;
  'x-mcp-server'?: { url?: string; transport?: string; auth?: string };
}

interface OpenApiOperation {
  summary?: string;
  description?: string;
  operationId?: string;
  'x-payment'?: { price?: string; currency?: string; unit?: string; rails?: string[]; card?: false | CardOffer };
}

/** The card charge a route offers; `credit`: a card credit of the processor's minimum that later calls draw on. */
export interface CardOffer {
  amount: string;
  credit: boolean;
}

export interface PricedRoute {
  method: string;
  path: string;
  summary: string;
  /** Decimal USD, as the document gives it ("0.050000"). */
  price: string;
  currency: string;
  unit: string;
  rails: string[];
  card: false | CardOffer;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
/** "Paid: 0.050000 USD; rails A = mpp ..., B = ..." in a description, for a route without `x-payment`. */
const PAID_DESCRIPTION = /Paid:\s*([0-9]+(?:\.[0-9]+)?)\s*USD(?:\s+per\s+(tick|session))?;\s*rails?\s+([^.]*)/i;

/** Every paid route of the document: its `x-payment` extension, else the price its description states. */
export function pricedRoutes(doc: OpenApiDocument): PricedRoute[] {
  const routes: PricedRoute[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method] as OpenApiOperation | undefined;
      if (!op || typeof op !== 'object') continue;
      const summary = op.summary ?? '';
      const payment = op['x-payment'];
      if (payment?.price) {
        routes.push({
          method: method.toUpperCase(),
          path,
          summary,
          price: payment.price,
          currency: payment.currency ?? 'USD',
          unit: payment.unit ?? 'charge',
          rails: payment.rails ?? [],
          card: payment.card ?? false,
        });
        continue;
      }
      const match = op.description ? PAID_DESCRIPTION.exec(op.description) : null;
      if (match) {
        const rails = [...(match[3] ?? '').matchAll(/\b([ABC])\s*=/g)].map((m) => m[1]!);
        const card = /\bcard\b/i.test(match[3] ?? '') && { amount: match[1]!, credit: false };
        routes.push({ method: method.toUpperCase(), path, summary, price: match[1]!, currency: 'USD', unit: match[2]?.toLowerCase() ?? 'charge', rails, card });
      }
    }
  }
  return routes.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
}

export const RAIL_NAMES: Record<string, string> = {
  A: 'A: MPP on Tempo',
  B: 'B: x402 on Base',
  C: 'C: x402 on Solana',
};

export function unitText(unit: string): string {
  if (unit === 'tick') return 'per tick';
  if (unit === 'session') return 'per session';
  return 'per call';
}
