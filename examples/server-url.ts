/** The server the example scripts talk to, and where that choice came from (printed first, issue 30). */
export const DEFAULT_BASE_URL = 'http://localhost:3000';

export interface ServerUrl {
  baseUrl: string;
  from: string;
}

/** --base-url, else $BASE_URL, else the default; a problem instead when it is not an http(s) URL. */
export function serverUrl(flag: string | undefined, env: string | undefined = process.env.BASE_URL): ServerUrl | { problem: string } {
  const [raw, from] = flag ? [flag, '--base-url'] : env ? [env, 'BASE_URL'] : [DEFAULT_BASE_URL, 'the default; change it with --base-url'];
  if (!/^https?:\/\/[^/]/.test(raw)) return { problem: `the server must be an http(s) URL such as ${DEFAULT_BASE_URL}, not ${raw} (from ${from})` };
  return { baseUrl: raw.replace(/\/+$/, ''), from };
}
