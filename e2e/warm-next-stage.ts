/**
 * The stage of "the next lab's cluster, started ahead" (issue 41), shared by its behaviour test
 * (e2e/warm-next.test.ts) and its audit (e2e/warm-next-audit.test.ts): Chromium over the cluster
 * test doubles, on first-service with its iptables cluster ready. The next lab, proxy-mode-rules,
 * opens on nftables for this learner, so that is the cluster the page asks for; its `kind create`
 * takes a minute while the state `slow` is `yes`, and the host's memory is whatever `free()` says.
 */
import type { Page } from 'playwright-core';
import { firstServiceScenario } from '../test/fixtures/first-service-scenario.ts';
import { fakeSystem, healthyRules, nodesJson } from '../test/fixtures/cluster-scenarios.ts';
import { stageWithDoubles, type Stage } from './harness.ts';

export const LAB = '/labs/first-service/';
export const NEXT_TITLE = 'Proxy mode and the rules behind web';
export const GiB = 1024 ** 3;

export const creates = (stage: Stage) =>
  stage.doubles.commandLines().filter((l) => l.startsWith('kind create cluster --name dplab-nftables ')).length;
export const deletes = (stage: Stage) =>
  stage.doubles.commandLines().filter((l) => l.startsWith('kind delete cluster --name dplab-nftables ')).length;
export const line = (page: Page) => page.locator('dplab-warm-next');
export const lineState = (page: Page) => line(page).getAttribute('data-state');

/**
 * The stage, with the nftables start slow until the test sets `slow: 'no'`. The audit injects axe
 * into the page past its CSP (`bypassCSP`); the behaviour runs under the page's own policy.
 */
export async function warmNextStage(free: () => number, opts: { bypassCSP?: boolean } = {}): Promise<Stage> {
  const nft = (rest: object) => ({
    tool: 'kubectl' as const,
    match: ' --kubeconfig \\S*dplab-nftables\\.yaml get nodes -o json$',
    ...rest,
  });
  const stage = await stageWithDoubles(
    {
      rules: [
        // iptables (this lab's) exists from the start; nftables once the runner has made it.
        { tool: 'kind', match: '^get clusters$', when: { nft: 'yes' }, stdout: 'dplab-iptables\ndplab-nftables\n' },
        { tool: 'kind', match: '^get clusters$', stdout: 'dplab-iptables\n' },
        // A start that takes its time, until the test lets the next one through at once.
        {
          tool: 'kind',
          match: '^create cluster --name dplab-nftables ',
          when: { slow: 'yes' },
          delayMs: 60_000,
          set: { nft: 'yes' },
          writesAfter: '--kubeconfig',
          writes: 'apiVersion: v1\n',
        },
        {
          tool: 'kind',
          match: '^create cluster --name dplab-nftables ',
          set: { nft: 'yes' },
          writesAfter: '--kubeconfig',
          writes: 'apiVersion: v1\n',
        },
        { tool: 'kind', match: '^delete cluster --name dplab-nftables ', set: { nft: 'no' } },
        nft({ when: { nft: 'yes' }, stdout: nodesJson('nftables') }),
        nft({ stderr: 'The connection to the server 127.0.0.1:6443 was refused\n', exit: 1 }),
        ...firstServiceScenario('iptables').rules,
        ...healthyRules('iptables'),
      ],
    },
    {
      clusterOf: 'iptables',
      browser: { bypassCSP: opts.bypassCSP ?? false },
      // The host's memory as the decision reads it: room for one more cluster, on any machine.
      course: { warm: true, services: { system: fakeSystem({ memAvailableBytes: free }) } },
    },
  );
  stage.doubles.setState({ created: 'yes', slow: 'yes' });
  // This learner opened the next lab on nftables before: it opens there again, so that is its cluster.
  await stage.browser.context.addInitScript(() => {
    if (!localStorage.getItem('dplab:lab:proxy-mode-rules'))
      localStorage.setItem('dplab:lab:proxy-mode-rules', JSON.stringify({ passed: {}, hints: {}, mode: 'nftables' }));
  });
  return stage;
}
