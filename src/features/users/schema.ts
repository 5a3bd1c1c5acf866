import { z } from '@hono/zod-openapi';

export const Session = z
  .object({
    user_id: z.string(),
    email: z.string().nullable(),
    is_platform_admin: z.boolean(),
    owned_employer_id: z.uuid().nullable().openapi({ description: 'The employer this user owns, if any.' }),
    employee_ids: z.array(z.uuid()).openapi({ description: 'Employee records linked to this user, across employers.' }),
  })
  .openapi('Session');

export const SignInOptions = z
  .object({
    dev_sign_in: z.boolean().openapi({ description: "Local mode: sign in as any user through POST /api/dev/token." }),
    login_url: z.string().nullable().openapi({ description: "The identity provider's hosted login (IDP_LOGIN_URL), or null." }),
  })
  .openapi('SignInOptions');
