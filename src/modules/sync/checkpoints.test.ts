import { describe, expect, test } from '@jest/globals';
import { CheckpointWriter, RunCheckpoints } from './checkpoints.js';

describe('RunCheckpoints', () => {
  test('a checkpoint is due once every item yielded before it is committed, the latest due one wins', async () => {
    const checkpoints = new RunCheckpoints();
    // A source that checkpoints after items 2 and 4 (as the stub does every CHECKPOINT_EVERY items).
    const source = async function* () {
      for (let index = 1; index <= 5; index++) {
        yield index;
        if (index % 2 === 0) checkpoints.checkpoint({ after: index });
      }
    };
    const read: number[] = [];
    const committed: (unknown | undefined)[] = [];
    for await (const item of checkpoints.count(source())) {
      read.push(item);
      // The pipeline commits a batch of three items after the third, and the rest at the end.
      if (read.length === 3) committed.push(checkpoints.committedThrough(3)?.cursor);
    }
    committed.push(checkpoints.committedThrough(5)?.cursor);
    // Items 1–3 committed: the checkpoint after 2 is due; the one after 4 waits for the last batch.
    expect(committed).toEqual([{ after: 2 }, { after: 4 }]);
    expect(checkpoints.committedThrough(5)).toBeUndefined();
  });

  test('nothing is due before the items it covers are committed', async () => {
    const checkpoints = new RunCheckpoints();
    const source = async function* () {
      yield 'a';
      yield 'b';
      checkpoints.checkpoint('after b');
    };
    const items: string[] = [];
    for await (const item of checkpoints.count(source())) items.push(item);
    expect(checkpoints.committedThrough(1)).toBeUndefined();
    expect(checkpoints.committedThrough(2)).toEqual({ after: 2, cursor: 'after b' });
  });
});

describe('CheckpointWriter', () => {
  /** A writer on a clock the test moves, and what it stored. */
  const writer = (intervalMs: number) => {
    const clock = { now: 0 };
    const stored: string[] = [];
    const checkpoints = new CheckpointWriter<string>(
      async (checkpoint) => {
        stored.push(checkpoint);
      },
      intervalMs,
      () => clock.now,
    );
    return { clock, stored, checkpoints };
  };

  test('the first due checkpoint is stored at once, later ones at most once an interval, the latest held one winning', async () => {
    const { clock, stored, checkpoints } = writer(1000);
    await checkpoints.offer('after 100');
    expect(stored).toEqual(['after 100']);
    clock.now = 400;
    await checkpoints.offer('after 200');
    clock.now = 800;
    await checkpoints.offer('after 300');
    await checkpoints.offer(undefined); // a batch that passed no checkpoint
    expect(stored).toEqual(['after 100']);
    // The interval has passed at a batch with no checkpoint of its own: the one held goes.
    clock.now = 1000;
    await checkpoints.offer(undefined);
    expect(stored).toEqual(['after 100', 'after 300']);
    // Nothing held: nothing stored, however long since.
    clock.now = 5000;
    await checkpoints.offer(undefined);
    expect(stored).toEqual(['after 100', 'after 300']);
    await checkpoints.offer('after 400');
    expect(stored).toEqual(['after 100', 'after 300', 'after 400']);
  });

  test('flush stores the one held whatever the interval, once', async () => {
    const { clock, stored, checkpoints } = writer(1000);
    await checkpoints.offer('after 100');
    clock.now = 10;
    await checkpoints.offer('after 200');
    await checkpoints.flush();
    await checkpoints.flush();
    expect(stored).toEqual(['after 100', 'after 200']);
  });
});
