import type { AppError } from '../../errors.js';
import { rateLimited, type RateLimits } from '../../http/rate-limits.js';

/**
 * Refused agent identity proofs, counted per identifier on every instance (the `proofFailures`
 * limit). Proofs are always checked before this runs and only refusals are counted, so a valid
 * proof is never refused because someone else sent bad ones for the same identifier: past the
 * limit, a refusal answers 429 with Retry-After instead of its 401 (docs/decisions.md, "Abuse limits on OAuth and proofs").
 */
export class ProofFailures {
  /** Re-checks inside jobs: nothing to throttle, nobody to tell. */
  static readonly uncounted = new ProofFailures(null);

  constructor(private readonly limits: RateLimits | null) {}

  /** The error to answer for a refused proof of `identifier`: `refusal`, or the 429 once over the limit. */
  async refusal(identifier: string, refusal: AppError): Promise<AppError> {
    if (!this.limits) return refusal;
    const verdict = await this.limits.consume('proofFailures', `agent:${identifier}`);
    return verdict.ok ? refusal : rateLimited('Too many refused identity proofs for this X-Agent-Identifier', verdict.retryAfterSeconds);
  }
}
