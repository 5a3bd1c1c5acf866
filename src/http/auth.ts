import type { MiddlewareHandler } from 'hono';
import type { IdentityClaims, IdentityVerifier } from '../providers/identity/verifier.js';
import type { AppEnv, Caller } from './context.js';
import { AppError } from '../errors.js';
import { errorResponse } from './errors.js';

const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]+)$/;

function unauthenticated(description: string): AppError {
  return new AppError('UNAUTHENTICATED', description, {}, {
    'WWW-Authenticate': `Bearer error="invalid_token", error_description="${description}"`,
  });
}

/** Turns verified claims into the caller (the users feature's service). */
export interface CallerResolver {
  resolveCaller(claims: IdentityClaims): Promise<Caller>;
}

/** Internal routes: `Authorization: Bearer <identity-provider JWT>` resolves `c.var.caller`. */
export function requireUser(verify: IdentityVerifier, users: CallerResolver): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const match = BEARER.exec(c.req.header('authorization') ?? '');
    if (!match?.[1]) return errorResponse(c, unauthenticated('A bearer token is required.'));
    let claims;
    try {
      claims = await verify(match[1]);
    } catch (error) {
      c.var.log.info({ reason: (error as Error).message }, 'bearer token refused');
      return errorResponse(c, unauthenticated('The bearer token is invalid or expired.'));
    }
    c.set('caller', await users.resolveCaller(claims));
    await next();
  };
}

/** Platform admins only (ADMIN_USER_IDS). Runs after requireUser. */
export const requirePlatformAdmin: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.var.caller.isPlatformAdmin) {
    return errorResponse(c, new AppError('FORBIDDEN', 'Platform admins only.'));
  }
  await next();
};
