/**
 * A seeded generator (mulberry32) for the chaos tests, so a failing run replays: the seed is taken from the named
 * variable when set, otherwise drawn, and printed either way.
 */
export interface SeededRandom {
  seed: number;
  /** A number in [0, 1). */
  next(): number;
  /** A whole number in [min, max]. */
  between(min: number, max: number): number;
  /** One of the choices, with the chance of its weight. */
  pick<T>(choices: Array<[number, T]>): T;
}

export function seededRandom(variable: string, label: string): SeededRandom {
  const seed = Number(process.env[variable] ?? Math.floor(Math.random() * 1_000_000));
  process.stdout.write(`${label} seed ${seed} (replay with ${variable}=${seed})\n`);
  return randomFrom(seed);
}

/** The generator of a given seed, for a second stream of the same run. */
export function randomFrom(seed: number): SeededRandom {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    seed,
    next,
    between: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick<T>(choices: Array<[number, T]>): T {
      let roll = next() * choices.reduce((sum, [weight]) => sum + weight, 0);
      for (const [weight, choice] of choices) {
        roll -= weight;
        if (roll <= 0) return choice;
      }
      return choices[choices.length - 1][1];
    },
  };
}
