/** headless's own check: the client pod's DNS answer for web-headless lists exactly the ready web pods. */
import { defineCheck, fact, fail, pass, podNotUsable, podReady } from '../../scripts/labs/checks/index.ts';
import { clientAndWebObservations, gatherClientAndWeb } from '../_shared/client-and-web.ts';

export const HEADLESS_FQDN = (ns: string) => `web-headless.${ns}.svc.cluster.local`;

/** The answer addresses of `nslookup` (BIND or busybox): `Address: 10.244.1.5` lines, not the server's `Address: 10.96.0.10#53`. */
function nslookupAddresses(stdout: string): string[] {
  const out: string[] = [];
  let inAnswer = false;
  for (const line of stdout.split('\n')) {
    if (/^Name:/.test(line)) inAnswer = true;
    const m = /^Address(?:\s+\d+)?:\s*([0-9a-fA-F:.]+)\s*$/.exec(line.trim());
    if (m && inAnswer) out.push(m[1]);
  }
  return [...new Set(out)].sort();
}

export const dnsCheck = defineCheck({
  observations: clientAndWebObservations,
  gather: (ctx) => gatherClientAndWeb(ctx, ['nslookup', HEADLESS_FQDN(ctx.namespace)]),
  evaluate(obs, ctx) {
    const notUsable = podNotUsable(
      'client',
      obs.client,
      ctx,
      `Start it with \`kubectl -n ${ctx.namespace} apply -f headless/client.yaml\`.`,
    );
    if (notUsable) return notUsable;
    const podIps = (obs.web.items ?? [])
      .filter(podReady)
      .map((p) => String(p.status?.podIP ?? '?'))
      .sort();
    const answers = nslookupAddresses(obs.client.result?.stdout ?? '');
    const facts = [
      fact(`nslookup ${HEADLESS_FQDN(ctx.namespace)} from client`, podIps, answers, answers.join() === podIps.join()),
      fact('ready web pod IPs', 'the same addresses', podIps, true),
    ];
    if (answers.length === 0) {
      const why =
        (obs.client.result?.stdout ?? '').match(/\*\*.*|NXDOMAIN|can't find[^\n]*/)?.[0] ??
        obs.client.result?.stderr.trim().split('\n')[0] ??
        '';
      return fail(
        `DNS has no address for ${HEADLESS_FQDN(ctx.namespace)}${why ? ` (${why.trim()})` : ''}. Does the Service web-headless exist?`,
        facts,
      );
    }
    if (!facts[0].ok)
      return fail(
        'DNS answered, but not with exactly the ready web pods; pods may still be changing. Check again in a moment.',
        facts,
        true,
      );
    return pass(
      `DNS answers ${HEADLESS_FQDN(ctx.namespace)} with the ${answers.length} pod addresses themselves: ${answers.join(', ')}. No virtual IP in between.`,
      facts,
    );
  },
});
