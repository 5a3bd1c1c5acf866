// Run by `npm install` (prepare) and `npm run build`: compiles contracts/*.sol into the cache, so
// the first `npm start` does not wait for the compiler.
import { loadArtifacts } from '../src/chains/contracts/compile.js';

const started = performance.now();
const artifacts = await loadArtifacts();
console.log(`contracts ready: ${Object.keys(artifacts).length} compiled in ${Math.round(performance.now() - started)} ms`);
