import { callbackUrlProblem, classifyAddress, resolveCallbackTarget } from '../../src/common/url-safety/callback-url';

/** Issue 11 §1: one classifier decides where callbacks may go; every form of a forbidden address is refused. */
describe('callback URL safety', () => {
  const refusedEverywhere = [
    'https://169.254.169.254/latest/meta-data/',
    'http://169.254.169.254/',
    'https://[fe80::1]/',
    'https://[::ffff:169.254.169.254]/', // IPv4-mapped metadata
    'https://[::ffff:a9fe:a9fe]/', // the same, hex form
    'https://[64:ff9b::a9fe:a9fe]/', // NAT64
    'https://[2002:a9fe:a9fe::1]/', // 6to4
    'https://2852039166/', // decimal 169.254.169.254
    'https://10.0.0.5/',
    'https://172.16.0.1/',
    'https://172.31.255.254/',
    'https://192.168.1.1/',
    'https://100.64.0.1/',
    'https://198.18.0.1/',
    'https://198.19.255.1/',
    'https://0.0.0.0/',
    'https://224.0.0.1/',
    'https://239.255.255.250/',
    'https://255.255.255.255/',
    'https://240.0.0.1/',
    'https://192.0.2.10/',
    'https://198.51.100.7/',
    'https://203.0.113.9/',
    'https://[fc00::1]/',
    'https://[fd12:3456::1]/',
    'https://[ff02::1]/',
    'https://[2001:db8::1]/',
    'https://[::ffff:10.0.0.1]/',
    'https://[::10.0.0.1]/', // IPv4-compatible
    'https://[64:ff9b:1::c0a8:101]/', // NAT64 local-use, 192.168.1.1
    'ftp://example.com/',
    'https://user:pass@example.com/',
    'not a url',
  ];
  const refusedInProductionOnly = [
    'https://[::ffff:127.0.0.1]:4779/',
    'https://[::ffff:7f00:1]:4779/',
    'https://[::127.0.0.1]/',
    'https://[64:ff9b::7f00:1]/',
    'https://[2002:7f00:1::]/',
    'http://2130706433/', // decimal 127.0.0.1
    'http://0x7f.1/', // hex
    'http://0177.0.0.1/', // octal
    'https://127.0.0.1/',
    'https://[::1]/',
    'https://localhost/',
    'http://127.0.0.1:8080/cb',
    'http://example.com/cb', // production: https only
  ];
  const allowed = ['https://example.com/cb', 'https://93.184.216.34/cb', 'https://[2606:4700::1111]/cb', 'https://8.8.8.8:8443/x?y=1'];

  it.each(refusedEverywhere)('refuses %s in production and in sandbox', (url) => {
    expect(callbackUrlProblem(url, false)).toEqual(expect.any(String));
    expect(callbackUrlProblem(url, true)).toEqual(expect.any(String));
  });

  it.each(refusedInProductionOnly)('refuses %s in production (sandbox may use loopback)', (url) => {
    expect(callbackUrlProblem(url, false)).toEqual(expect.any(String));
  });

  it('sandbox accepts http:// and https:// to loopback only', () => {
    for (const url of [
      'http://127.0.0.1:8080/cb',
      'http://localhost:3000/x',
      'http://[::1]:9/x',
      'http://[::ffff:127.0.0.1]:4779/',
      'https://127.0.0.1/',
    ]) {
      expect(callbackUrlProblem(url, true)).toBeNull();
    }
    expect(callbackUrlProblem('http://example.com/cb', true)).toMatch(/HTTPS/);
  });

  it("sandbox reaches a receiver on the container's host as host.docker.internal, at its private address only", async () => {
    expect(callbackUrlProblem('http://host.docker.internal:4000/callbacks', true)).toBeNull();
    expect(callbackUrlProblem('http://host.docker.internal:4000/callbacks', false)).toMatch(/HTTPS/);
    expect(callbackUrlProblem('http://docker.internal.example.com/cb', true)).toMatch(/HTTPS/);
    const resolvesTo = (address: string) => async () => [{ address, family: 4 }];
    for (const address of ['192.168.65.254', '172.17.0.1', '127.0.0.1']) {
      await expect(resolveCallbackTarget('http://host.docker.internal:4000/cb', true, resolvesTo(address))).resolves.toMatchObject({
        target: { address },
      });
    }
    await expect(resolveCallbackTarget('http://host.docker.internal/cb', true, resolvesTo('169.254.169.254'))).resolves.toEqual({
      problem: expect.stringContaining('link-local'),
    });
    await expect(resolveCallbackTarget('https://host.docker.internal/cb', false, resolvesTo('192.168.65.254'))).resolves.toEqual({
      problem: expect.stringContaining('192.168.65.254'),
    });
    // Only that name: any other host resolving to a private address is still refused in sandbox.
    await expect(resolveCallbackTarget('https://intranet.test/cb', true, resolvesTo('172.17.0.1'))).resolves.toEqual({
      problem: expect.stringContaining('172.17.0.1'),
    });
  });

  it.each(allowed)('accepts public %s in both modes', (url) => {
    expect(callbackUrlProblem(url, false)).toBeNull();
    expect(callbackUrlProblem(url, true)).toBeNull();
  });

  it('classifies embedded IPv4 by the address it carries', () => {
    expect(classifyAddress('::ffff:8.8.8.8')).toBe('public');
    expect(classifyAddress('64:ff9b::808:808')).toBe('public');
    expect(classifyAddress('::ffff:7f00:1')).toBe('loopback');
    expect(classifyAddress('2002:0a00:0001::')).toBe('refused');
    expect(classifyAddress('fe80::1%eth0')).toBe('link-local');
    expect(classifyAddress('garbage')).toBe('refused');
  });

  it('a host name is judged on every address it resolves to', async () => {
    const lookup = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.1.2.3', family: 4 },
    ];
    await expect(resolveCallbackTarget('https://mixed.test/cb', false, lookup)).resolves.toEqual({
      problem: expect.stringContaining('10.1.2.3'),
    });
    const metadata = async () => [{ address: '169.254.169.254', family: 4 }];
    await expect(resolveCallbackTarget('https://meta.test/cb', true, metadata)).resolves.toEqual({
      problem: expect.stringContaining('link-local'),
    });
    const pub = async () => [{ address: '2606:4700::1111', family: 6 }];
    await expect(resolveCallbackTarget('https://ok.test/cb', false, pub)).resolves.toMatchObject({
      target: { address: '2606:4700::1111', family: 6 },
    });
    const none = async () => [];
    await expect(resolveCallbackTarget('https://nowhere.test/cb', false, none)).resolves.toEqual({
      problem: expect.stringContaining('does not resolve'),
    });
  });
});
