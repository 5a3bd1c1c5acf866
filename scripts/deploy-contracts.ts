// `npm run deploy:contracts -- --network <tempo|base>`: deploys our contracts to the live chain at
// TEMPO_RPC_URL with EVM_SERVICE_KEY and prints the TEMPO_CONTRACTS value (docs/operations.md).
import { parseArgs } from 'node:util';
import { deployLiveContracts } from '../src/chains/contracts/deploy-live.js';
import { loadDeployConfig } from '../src/config.js';

const { values } = parseArgs({ options: { network: { type: 'string' } } });
let rpcUrl: string | undefined;
try {
  const config = loadDeployConfig(values.network);
  rpcUrl = config.rpcUrl;
  const outcome = await deployLiveContracts(config);
  if (outcome.network === 'base') {
    process.stderr.write(`${outcome.note}\n`);
  } else {
    process.stderr.write(outcome.deployed ? 'deployed; set TEMPO_CONTRACTS to:\n' : 'already deployed and checked; nothing sent. TEMPO_CONTRACTS:\n');
    process.stdout.write(`${JSON.stringify(outcome.tempoContracts)}\n`);
  }
} catch (error) {
  // An RPC error's text can carry the URL and its API key: name the setting instead.
  const message = error instanceof Error ? error.message : String(error);
  const setting = values.network === 'base' ? '<BASE_RPC_URL>' : '<TEMPO_RPC_URL>';
  process.stderr.write(`deploy:contracts failed: ${rpcUrl ? message.replaceAll(rpcUrl, setting).replaceAll(new URL(rpcUrl).href, setting) : message}\n`);
  process.exitCode = 1;
}
