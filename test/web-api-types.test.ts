import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { API_TYPES_FILE, apiTypesSource } from '../scripts/api-types.js';

describe('web API types', () => {
  it('match the OpenAPI document (run `npm run gen:api-types` after changing a route)', async () => {
    expect(fs.readFileSync(API_TYPES_FILE, 'utf8')).toBe(await apiTypesSource());
  });
});
