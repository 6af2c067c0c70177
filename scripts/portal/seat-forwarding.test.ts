import { describe, expect, it } from 'vitest';
import { labRoutes } from '../server/routes/labs.ts';
import { PROGRESS_PATHS } from '../wire/runner-paths.ts';
import { changesSeat } from './seat-forwarding.ts';

describe('which forwarded calls make the dashboard read a seat again', () => {
  it('a check, a solve, a step or lab reset and a progress upload change progress; reads and other routes do not', () => {
    const progress = (method: string, path: string) => changesSeat(method, path).progress;
    for (const path of [
      '/api/labs/first-service/steps/deploy-web/check',
      '/api/labs/first-service/steps/deploy-web/solve',
      '/api/labs/first-service/steps/deploy-web/reset',
      '/api/labs/first-service/reset',
    ])
      expect(progress('POST', path), path).toBe(true);
    expect(progress('PUT', '/api/progress')).toBe(true);
    expect(progress('GET', '/api/progress')).toBe(false);
    expect(progress('GET', '/api/labs/first-service/steps/deploy-web/check')).toBe(false);
    for (const path of [
      '/api/labs/first-service/setup',
      '/api/labs/first-service/steps/deploy-web/goto',
      '/api/labs/first-service/steps/deploy-web/check/more',
      '/api/labs/reset',
      '/api/progress/more',
    ])
      expect(progress('POST', path), path).toBe(false);
  });

  it('a call that changes a cluster (start, warm, delete) reads its clusters too; the list and a status do not', () => {
    expect(changesSeat('POST', '/api/clusters/iptables/up')).toEqual({ progress: false, clusters: true });
    expect(changesSeat('DELETE', '/api/clusters/iptables')).toEqual({ progress: false, clusters: true });
    expect(changesSeat('GET', '/api/clusters/iptables').clusters).toBe(false);
    expect(changesSeat('POST', '/api/clusters').clusters).toBe(false);
  });

  it("the paths it watches are the runner's own routes, each with a method besides GET", () => {
    for (const path of PROGRESS_PATHS)
      expect(
        labRoutes.filter((r) => r.path === path && r.method !== 'GET').map((r) => r.path),
        path,
      ).toEqual([path]);
  });
});
