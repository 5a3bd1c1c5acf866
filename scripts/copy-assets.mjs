// The compiled service reads its SQL migrations at run time: copy them next to the JS.
import fs from 'node:fs';

fs.cpSync('src/db/migrations', 'dist/db/migrations', { recursive: true });
