import { describe, expect, it } from 'vitest';
import { fundingTurn } from './session.js';

/** A piece of work that runs until `finish` is called, noting when it started. */
function blocked(name: string, started: string[]) {
  let finish = () => {};
  const done = new Promise<void>((resolve) => (finish = resolve));
  return {
    work: async () => {
      started.push(name);
      await done;
    },
    finish: () => finish(),
  };
}

describe('channel funding turns (FUNDINGS_AT_ONCE)', () => {
  it('runs four at a time, and a waiting top-up goes before the opens that waited longer', async () => {
    const started: string[] = [];
    const running = [1, 2, 3, 4].map((n) => blocked(`open ${n}`, started));
    const turns = running.map((r) => fundingTurn('open', r.work));
    const waiting = [blocked('open 5', started), blocked('open 6', started)];
    const topUp = blocked('top-up', started);
    turns.push(...waiting.map((w) => fundingTurn('open', w.work)), fundingTurn('topUp', topUp.work));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(started).toEqual(['open 1', 'open 2', 'open 3', 'open 4']);

    running[0]!.finish();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(started.slice(4)).toEqual(['top-up']);

    for (const r of [...running, ...waiting, topUp]) r.finish();
    await Promise.all(turns);
    expect(started.slice(5).sort()).toEqual(['open 5', 'open 6']);
  });
});
