import { GroupCommit, GroupCommitOptions } from '../../../src/infra/database/group-commit';

/** The gathering rules of group commit, with a flush that records the groups it is given. */
describe('GroupCommit', () => {
  function recorder(options: GroupCommitOptions<number>, fail?: (items: number[]) => boolean) {
    const groups: number[][] = [];
    let open = 0;
    let mostOpen = 0;
    const releases: Array<() => void> = [];
    const group = new GroupCommit<number, string>(async (items) => {
      groups.push(items);
      open++;
      mostOpen = Math.max(mostOpen, open);
      await new Promise<void>((resolve) => releases.push(resolve));
      open--;
      if (fail?.(items)) throw new Error(`group ${items.join(',')} failed`);
      return items.map((i) => `done ${i}`);
    }, options);
    /** Lets every call the group makes come back, until `answers` settle. */
    const releaseAll = async <T>(answers: Promise<T>): Promise<T> => {
      let settled = false;
      void answers.finally(() => (settled = true));
      while (!settled) {
        releases.splice(0).forEach((release) => release());
        await new Promise((resolve) => setImmediate(resolve));
      }
      return answers;
    };
    return { group, groups, releaseAll, mostOpen: () => mostOpen };
  }

  it('sends requests of the same turn together, each answered with its own result', async () => {
    const { group, groups, releaseAll } = recorder({ maxItems: 10, maxInFlight: 2 });
    const answers = Promise.all([1, 2, 3].map((i) => group.submit(i)));
    expect(await releaseAll(answers)).toEqual(['done 1', 'done 2', 'done 3']);
    expect(groups).toEqual([[1, 2, 3]]);
  });

  it('keeps at most maxInFlight calls out and maxItems per call; the queue leaves as calls come back', async () => {
    const { group, groups, releaseAll, mostOpen } = recorder({ maxItems: 2, maxInFlight: 1 });
    const answers = Promise.all([1, 2, 3, 4, 5].map((i) => group.submit(i)));
    expect(await releaseAll(answers)).toEqual([1, 2, 3, 4, 5].map((i) => `done ${i}`));
    expect(groups).toEqual([[1, 2], [3, 4], [5]]);
    expect(mostOpen()).toBe(1);
  });

  it('a failed call fails only the requests it carried', async () => {
    const { group, releaseAll } = recorder({ maxItems: 2, maxInFlight: 2 }, (items) => items.includes(1));
    const answers = [1, 2, 3].map((i) => group.submit(i).catch((e: Error) => e.message));
    expect(await releaseAll(Promise.all(answers))).toEqual(['group 1,2 failed', 'group 1,2 failed', 'done 3']);
  });

  it("with lanes, a call carries one lane's items, and each lane has its own calls out", async () => {
    // Odd and even play two clients: groups never mix them, and one client's call out does not hold the other's.
    const { group, groups, releaseAll, mostOpen } = recorder({ maxItems: 10, maxInFlight: 1, laneOf: (i) => String(i % 2) });
    const answers = Promise.all([1, 2, 3, 4, 5].map((i) => group.submit(i)));
    expect(await releaseAll(answers)).toEqual([1, 2, 3, 4, 5].map((i) => `done ${i}`));
    expect(groups).toEqual([
      [1, 3, 5],
      [2, 4],
    ]);
    expect(mostOpen()).toBe(2);
  });

  it('a lane whose call is out queues its next items while another lane sends', async () => {
    const { group, groups, releaseAll } = recorder({ maxItems: 10, maxInFlight: 1, laneOf: (i) => (i < 10 ? 'a' : 'b') });
    const first = group.submit(1);
    await new Promise((resolve) => setImmediate(resolve));
    const later = Promise.all([2, 3, 10].map((i) => group.submit(i)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(groups).toEqual([[1], [10]]);
    await releaseAll(Promise.all([first, later]));
    expect(groups).toEqual([[1], [10], [2, 3]]);
  });
});
