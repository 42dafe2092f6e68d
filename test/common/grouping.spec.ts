import { groupBy, groupsOfOneKey } from '../../src/common/grouping';

describe('grouping', () => {
  const rows = [
    { id: 1, client: 'a' },
    { id: 2, client: 'b' },
    { id: 3, client: 'a' },
    { id: 4, client: 'a' },
    { id: 5, client: 'c' },
    { id: 6, client: 'b' },
  ];
  const ids = (groups: Array<Array<{ id: number }>>) => groups.map((group) => group.map((row) => row.id));

  it('groups by key, keeping the order of the items and of the keys first seen', () => {
    const byClient = groupBy(rows, (row) => row.client);
    expect([...byClient.keys()]).toEqual(['a', 'b', 'c']);
    expect(ids([...byClient.values()])).toEqual([[1, 3, 4], [2, 6], [5]]);
  });

  it('cuts each key into groups of at most the size, oldest first, never mixing keys', () => {
    expect(ids(groupsOfOneKey(rows, (row) => row.client, 2))).toEqual([[1, 3], [2, 6], [4], [5]]);
    expect(ids(groupsOfOneKey(rows, (row) => row.client, 1))).toEqual([[1], [2], [3], [4], [5], [6]]);
    expect(groupsOfOneKey([], (row: { client: string }) => row.client, 5)).toEqual([]);
  });
});
