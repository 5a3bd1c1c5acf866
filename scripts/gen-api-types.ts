// `npm run gen:api-types`: rewrites web/src/lib/api-types.ts from the server's OpenAPI document.
// test/web-api-types.test.ts fails while the committed file is stale.
import fs from 'node:fs';
import { API_TYPES_FILE, apiTypesSource } from './api-types.js';

fs.writeFileSync(API_TYPES_FILE, await apiTypesSource());
console.log(`wrote ${API_TYPES_FILE}`);
