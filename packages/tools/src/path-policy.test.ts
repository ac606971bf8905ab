import { mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPath, isInside, PathViolation, pathPolicyFor } from './path-policy.ts';

describe('isInside', () => {
  it('matches whole path components only', () => {
    expect(isInside('/data', '/data')).toBe(true);
    expect(isInside('/data', '/data/a/b')).toBe(true);
    expect(isInside('/data', '/data-evil/a')).toBe(false);
    expect(isInside('/data', '/dat')).toBe(false);
    expect(isInside('/data', '/')).toBe(false);
    expect(isInside('/data', '/data/..x')).toBe(true);
    expect(isInside('/', '/anything')).toBe(true);
  });
});

describe('checkPath', () => {
  let base: string;
  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'mci-policy-')));
    await mkdir(join(base, 'tools', 'real'), { recursive: true });
    await symlink(join(base, 'tools', 'real'), join(base, 'tools', 'alias'));
    await symlink('/etc', join(base, 'tools', 'etc'));
  });
  afterAll(() => rm(base, { recursive: true, force: true }));

  it('resolves relative paths against the base directory and returns the real path', async () => {
    const policy = pathPolicyFor(join(base, 'tools'), {});
    expect(await checkPath('real/x.txt', policy)).toBe(join(base, 'tools', 'real', 'x.txt'));
    expect(await checkPath('alias/new/deeper.txt', policy)).toBe(
      join(base, 'tools', 'real', 'new', 'deeper.txt'),
    );
  });

  it('follows symlinks (also of missing files) before checking', async () => {
    const policy = pathPolicyFor(join(base, 'tools'), {});
    await expect(checkPath('etc/passwd', policy)).rejects.toThrow(PathViolation);
    await expect(checkPath('etc/not-there', policy)).rejects.toThrow('Path "etc/not-there" is outside');
  });

  it('lets a relative allow-list entry name a sibling, and anyPaths allow everything', async () => {
    const policy = pathPolicyFor(join(base, 'tools'), { directoryAllowList: ['../shared'] });
    expect(policy.roots).toEqual([join(base, 'tools'), join(base, 'shared')]);
    expect(await checkPath('../shared/a', policy)).toBe(join(base, 'shared', 'a'));
    await expect(checkPath('../other/a', policy)).rejects.toThrow('Path "../other/a" is outside');
    expect(await checkPath('/etc/passwd', pathPolicyFor(base, { enableAnyPaths: true }))).toBe('/etc/passwd');
    expect(pathPolicyFor(base, { enableAnyPaths: true }, { enableAnyPaths: false }).anyPaths).toBe(false);
  });
});
