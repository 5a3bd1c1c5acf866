import { describe, expect, it } from 'vitest';
import { SecretBox } from './secret-box.js';

describe('SecretBox', () => {
  const box = new SecretBox({ configured: 'a configured key of at least thirty-two characters', dataDir: '/nonexistent' });

  it('opens what it sealed, for the row it was sealed to only', async () => {
    const sealed = await box.seal('ahs_secret', 'row-1');
    expect(await box.open(sealed, 'row-1')).toBe('ahs_secret');
    await expect(box.open(sealed, 'row-2')).rejects.toThrow();
  });

  it('refuses a shortened authentication tag (GCM accepts a prefix of the tag unless its length is pinned)', async () => {
    const [version, iv, tag, ciphertext] = (await box.seal('ahs_secret', 'row-1')).split('.');
    for (const bytes of [4, 8, 12, 15]) {
      const short = Buffer.from(tag!, 'base64url').subarray(0, bytes).toString('base64url');
      await expect(box.open([version, iv, short, ciphertext].join('.'), 'row-1'), `${bytes}-byte tag`).rejects.toThrow();
    }
  });
});
