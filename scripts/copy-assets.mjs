// The compiled service reads its SQL migrations and the sanctions snapshot at run time: copy them next to the JS.
import fs from 'node:fs';

fs.cpSync('src/db/migrations', 'dist/db/migrations', { recursive: true });
fs.cpSync('src/features/compliance/ofac-sdn-evm-addresses-2024-09-27.csv', 'dist/features/compliance/ofac-sdn-evm-addresses-2024-09-27.csv');
