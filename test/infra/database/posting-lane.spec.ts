import { PostingLane } from '../../../src/infra/database/posting-lane';

/** The worker's posting transactions run one at a time per process, in the order they came. */
describe('PostingLane', () => {
  it('runs tasks one at a time, in order, and a failing task does not stop the next', async () => {
    const lane = new PostingLane();
    const events: string[] = [];
    let running = 0;
    let most = 0;
    const task =
      (name: string, fail = false) =>
      async () => {
        running++;
        most = Math.max(most, running);
        events.push(`start ${name}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        events.push(`end ${name}`);
        running--;
        if (fail) throw new Error(`${name} failed`);
        return name;
      };
    const results = await Promise.allSettled([lane.run(task('a')), lane.run(task('b', true)), lane.run(task('c'))]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual(['a', 'b failed', 'c']);
    expect(most).toBe(1);
    expect(events).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });
});
