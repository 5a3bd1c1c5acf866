import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

const VERSION = 'v1';
// Pinned: without it GCM also accepts a prefix of the tag (down to 4 bytes), which makes forging cheap.
const TAG_BYTES = 16;
const KEY_FILE = 'agent-secrets.key';

/**
 * Encrypts HMAC secrets at rest (AES-256-GCM; the key is the SHA-256 of AGENT_SECRETS_KEY).
 * Stored form: `v1.<iv>.<tag>.<ciphertext>` in base64url; the authorization id is bound as
 * additional data, so a ciphertext copied onto another row does not decrypt.
 * Without a configured key (local mode) one is generated into the data directory on first use:
 * loading it lazily keeps building the app free of I/O.
 */
export class SecretBox {
  private key: Promise<Buffer> | undefined;

  constructor(private readonly source: { configured: string | undefined; dataDir: string }) {}

  async seal(plaintext: string, boundTo: string): Promise<string> {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', await this.loadKey(), iv, { authTagLength: TAG_BYTES }).setAAD(Buffer.from(boundTo));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), ciphertext].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
  }

  /** The plaintext, or an error when the stored value was altered, moved or sealed under another key. */
  async open(sealed: string, boundTo: string): Promise<string> {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || ciphertext === undefined) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', await this.loadKey(), Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES })
      .setAAD(Buffer.from(boundTo))
      .setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }

  private loadKey(): Promise<Buffer> {
    this.key ??= this.readKeyMaterial().then((material) => createHash('sha256').update(material).digest());
    return this.key;
  }

  private async readKeyMaterial(): Promise<string> {
    if (this.source.configured) return this.source.configured;
    const file = path.join(this.source.dataDir, KEY_FILE);
    await fs.mkdir(this.source.dataDir, { recursive: true });
    try {
      // `wx`: of two processes starting together, one writes the key and the other reads it.
      await fs.writeFile(file, randomBytes(32).toString('base64url'), { flag: 'wx', mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    return (await fs.readFile(file, 'utf8')).trim();
  }
}
