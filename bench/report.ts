// The benchmark's Markdown report, built from its JSON result (so the two never disagree).
//
// The targets it checks, each on the runtime it names (a ratio holds only for the runtime it was
// measured on: the simulated runtime's answers are shaped differently from containerd's):
//
// | figure                                             | runtime    | target                    |
// |----------------------------------------------------|------------|---------------------------|
// | nodepulse's CPU per relist at 330 containers        | containerd | ≤ 0.5× the floor's        |
// | the same                                           | containerd | ≤ 2× kubelet's client's   |
// | nodepulse's CPU per relist with no containers       | containerd, simulated | ≤ 1× the floor's |
// | nodepulse's CPU per relist at 10,000 containers     | simulated  | ≤ 1× kubelet's client's, ≤ 0.5× the floor's |
// | the agent's steady state at 330 containers, in a pod | containerd | ≤ 0.5 % of one core, ≤ 80 MiB RSS |
// | requests per lease renewal                         | any        | 1                         |
import type { Latencies, LeaseCost, SteadyState } from './agent-bench.ts';
import type { OneHzResult, OneHzSide } from './one-hz.ts';
import type { RuntimeKind, SideResult, SizeResult } from './relist-bench.ts';
import type { RssLine } from './rss-breakdown.ts';

export const TARGETS = {
  floorRatio330: 0.5,
  kubeletRatio330: 2,
  floorRatioEmpty: 1,
  kubeletRatio10k: 1,
  floorRatio10k: 0.5,
  steadyCpuPercent: 0.5,
  steadyRssMiB: 80,
  requestsPerRenewal: 1,
} as const;

export interface BenchResult {
  readonly quick: boolean;
  readonly machine: { readonly node: string; readonly cpus: number; readonly cpuModel: string };
  /** os.loadavg() when the run began and when it ended. */
  readonly load: { readonly before: readonly number[]; readonly after: readonly number[] };
  readonly sizes: readonly SizeResult[];
  /** Every side once a second on the real containerd (absent without one). */
  readonly oneHz?: OneHzResult;
  readonly kubelet?: { readonly client: string; readonly goVersion: string; readonly built: boolean; readonly buildSeconds?: number };
  readonly containerd?: { readonly pods: number; readonly containers: number; readonly fillSeconds: number };
  readonly steadyState?: SteadyState;
  /** The agent at 1,000 and 10,000 containers (simulated), for its RSS. */
  readonly steadyRss?: readonly SteadyState[];
  readonly lease?: LeaseCost;
  readonly latencies?: Readonly<Record<string, Latencies>>;
  readonly rssBreakdown?: readonly RssLine[];
  readonly notes: readonly string[];
}

const fixed = (n: number | undefined, digits: number): string => (n !== undefined && Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
const ratioOf = (a: number, b: number | undefined): number => (b !== undefined && b > 0 ? a / b : Number.NaN);
const ratio = (a: number | undefined, b: number | undefined): string => (a !== undefined && b !== undefined && b > 0 ? `${(a / b).toFixed(2)}×` : 'n/a');
const count = (n: number): string => n.toLocaleString('en-US');
const mark = (ok: boolean): string => (ok ? 'met' : '**NOT met**');
const load = (l: readonly number[]): string => l.map((n) => n.toFixed(2)).join(', ');

function sideRow(s: SizeResult, side: SideResult): string {
  return `| ${s.runtime} | ${count(s.containers)} | ${side.side} | ${fixed(side.cpuMsPerRelist, 2)} | ${fixed(side.p50Ms, 2)} | ${fixed(side.p99Ms, 2)} | ${side.bytes === undefined ? 'n/a' : count(side.bytes)} | ${fixed(side.rssMiB, 0)} |`;
}

function relistTable(sizes: readonly SizeResult[]): string[] {
  const out = [
    '| runtime | containers | side | CPU ms / relist | p50 ms | p99 ms | bytes received | RSS MiB |',
    '|---|---:|---|---:|---:|---:|---:|---:|',
  ];
  for (const s of sizes) {
    const { floor: f, nodepulse: n, kubelet: k, transport: t } = s;
    out.push(sideRow(s, f), sideRow(s, n));
    if (k !== undefined) out.push(sideRow(s, k));
    out.push(sideRow(s, t));
    out.push(`| ${s.runtime} | ${count(s.containers)} | **nodepulse / floor** | **${ratio(n.cpuMsPerRelist, f.cpuMsPerRelist)}** | ${ratio(n.p50Ms, f.p50Ms)} | ${ratio(n.p99Ms, f.p99Ms)} | ${ratio(n.bytes, f.bytes)} | ${ratio(n.rssMiB, f.rssMiB)} |`);
    if (k !== undefined) {
      out.push(`| ${s.runtime} | ${count(s.containers)} | **nodepulse / kubelet** | **${ratio(n.cpuMsPerRelist, k.cpuMsPerRelist)}** | ${ratio(n.p50Ms, k.p50Ms)} | ${ratio(n.p99Ms, k.p99Ms)} | n/a | ${ratio(n.rssMiB, k.rssMiB)} |`);
    }
  }
  return out;
}

function verdicts(result: BenchResult): string[] {
  const out: string[] = [];
  const at = (runtime: RuntimeKind, containers: (n: number) => boolean): SizeResult | undefined => result.sizes.find((s) => s.runtime === runtime && containers(s.containers));
  const full = at('containerd', (n) => n > 0);
  if (full !== undefined) {
    const f = ratioOf(full.nodepulse.cpuMsPerRelist, full.floor.cpuMsPerRelist);
    const k = ratioOf(full.nodepulse.cpuMsPerRelist, full.kubelet?.cpuMsPerRelist);
    out.push(
      `- containerd, ${count(full.containers)} containers: nodepulse's CPU per relist ${f.toFixed(2)}× the floor's (target ≤ ${TARGETS.floorRatio330}×): ${mark(f <= TARGETS.floorRatio330)}; ` +
        `${Number.isFinite(k) ? `${k.toFixed(2)}× kubelet's client's (target ≤ ${TARGETS.kubeletRatio330}×): ${mark(k <= TARGETS.kubeletRatio330)}` : 'no kubelet side'}` +
        `${full.containers === 330 ? '' : ' (the targets are for 330 containers)'}.`,
    );
  }
  for (const runtime of ['containerd', 'simulated'] as const) {
    const empty = at(runtime, (n) => n === 0);
    if (empty === undefined) continue;
    const f = ratioOf(empty.nodepulse.cpuMsPerRelist, empty.floor.cpuMsPerRelist);
    const t = ratioOf(empty.transport.cpuMsPerRelist, empty.floor.cpuMsPerRelist);
    out.push(
      `- ${runtime}, no containers: nodepulse's CPU per relist ${f.toFixed(2)}× the floor's (target ≤ ${TARGETS.floorRatioEmpty}×): ${mark(f <= TARGETS.floorRatioEmpty)}; ` +
        `grpc-js's two calls alone (transport) cost ${t.toFixed(2)}× the floor's.`,
    );
  }
  const big = at('simulated', (n) => n === 10_000);
  if (big !== undefined) {
    const f = ratioOf(big.nodepulse.cpuMsPerRelist, big.floor.cpuMsPerRelist);
    const k = ratioOf(big.nodepulse.cpuMsPerRelist, big.kubelet?.cpuMsPerRelist);
    out.push(
      `- simulated, 10,000 containers: nodepulse's CPU per relist ${Number.isFinite(k) ? `${k.toFixed(2)}× kubelet's client's (target ≤ ${TARGETS.kubeletRatio10k}×): ${mark(k <= TARGETS.kubeletRatio10k)}` : 'n/a against kubelet (no kubelet side)'}; ` +
        `${f.toFixed(2)}× the floor's (target ≤ ${TARGETS.floorRatio10k}×): ${mark(f <= TARGETS.floorRatio10k)}.`,
    );
  }
  const st = result.steadyState;
  if (st !== undefined) {
    out.push(
      `- Steady state (${st.runtime}, ${count(st.containers)} containers, in a pod's shape): ${st.cpuPercentOfOneCore.toFixed(2)} % of one core (target ≤ ${TARGETS.steadyCpuPercent} %): ${mark(st.cpuPercentOfOneCore <= TARGETS.steadyCpuPercent)}; ` +
        `RSS ${st.rssMiB.toFixed(1)} MiB (target ≤ ${TARGETS.steadyRssMiB}): ${mark(st.rssMiB <= TARGETS.steadyRssMiB)}.`,
    );
  }
  const l = result.lease;
  if (l !== undefined) {
    out.push(`- Lease renewal: ${fixed(l.requestsPerRenewal, 2)} request(s) per renewal (target ${TARGETS.requestsPerRenewal}): ${mark(l.requestsPerRenewal === TARGETS.requestsPerRenewal)}.`);
  }
  return out;
}

function oneHzRow(side: OneHzSide): string {
  return `| ${side.side} | ${fixed(side.cpuMsPerSecond, 2)} | ${fixed(side.percentOfOneCore, 2)} | ${fixed(side.p50Ms, 2)} | ${fixed(side.rssMiB, 0)} |`;
}

/** The relist once a second, every side together, read against the steady state's CPU target. */
function oneHzSection(r: OneHzResult): string[] {
  const out = [
    `### Relist at the agent's rate: every side once a second, together (${count(r.containers)} containers on ${r.runtime}, ${r.seconds} s after ${r.warmSeconds} s unmeasured)`,
    '',
    '| side | CPU ms per second (= per relist) | % of one core | relist p50 ms | RSS MiB |',
    '|---|---:|---:|---:|---:|',
    oneHzRow(r.floor),
    oneHzRow(r.nodepulse),
  ];
  if (r.kubelet !== undefined) out.push(oneHzRow(r.kubelet));
  out.push(oneHzRow(r.transport));
  out.push('');
  const k = r.kubelet === undefined ? 'no kubelet side' : `${ratio(r.nodepulse.cpuMsPerSecond, r.kubelet.cpuMsPerSecond)} kubelet's client's`;
  out.push(
    `nodepulse's relist at 1 Hz: ${ratio(r.nodepulse.cpuMsPerSecond, r.floor.cpuMsPerSecond)} the floor's, ${k}. ` +
      `Beside the steady state's target of ${TARGETS.steadyCpuPercent} % of one core for the whole agent, the relist alone at 1 Hz costs ` +
      `${fixed(r.nodepulse.percentOfOneCore, 2)} % by nodepulse, ${r.kubelet === undefined ? 'n/a' : fixed(r.kubelet.percentOfOneCore, 2)} % by kubelet's client, ` +
      `and grpc-js's two calls alone, nothing decoded, ${fixed(r.transport.percentOfOneCore, 2)} %.`,
  );
  return out;
}

function steadyRow(st: SteadyState): string {
  return `| ${st.cpuPercentOfOneCore.toFixed(2)} | ${st.rssMiB.toFixed(1)} | ${st.rssAnonMiB.toFixed(1)} | ${st.rssFileMiB.toFixed(1)} | ${st.heapUsedMiB.toFixed(1)} | ${st.heapTotalMiB.toFixed(1)} | ${st.eventLoopLagP99Ms.toFixed(2)} | ${st.relists} | ${st.runtime} | ${count(st.containers)} |`;
}

export function renderReport(result: BenchResult): string {
  const out: string[] = [];
  out.push(`## nodepulse benchmark${result.quick ? ' (--quick: fewer relists, a shorter steady-state window, a smaller containerd node)' : ''}`);
  out.push('');
  out.push(`Machine: ${result.machine.cpus} × ${result.machine.cpuModel}, Node ${result.machine.node}; load average (1, 5, 15 min) ${load(result.load.before)} at the start, ${load(result.load.after)} at the end.`);
  const k = result.kubelet;
  if (k !== undefined) {
    out.push('');
    out.push(`kubelet side: ${k.client}, built with ${k.goVersion}${k.built ? ` in this run (${fixed(k.buildSeconds, 0)} s)` : ' (cached)'}.`);
  }
  const c = result.containerd;
  if (c !== undefined) {
    out.push('');
    out.push(`containerd node: ${c.pods} pods, ${c.containers} running containers, made in ${c.fillSeconds.toFixed(0)} s.`);
  }
  if (result.sizes.length > 0) {
    out.push('');
    out.push('### Relist: the floor (grpc-js + proto-loader full decode), nodepulse\'s full relist tick, kubelet\'s CRI client, and grpc-js\'s calls alone (transport)');
    out.push('');
    out.push(...relistTable(result.sizes));
  }
  if (result.oneHz !== undefined) {
    out.push('');
    out.push(...oneHzSection(result.oneHz));
  }
  out.push('');
  out.push(...verdicts(result));
  const st = result.steadyState;
  if (st !== undefined) {
    out.push('');
    out.push(`### Agent steady state (${count(st.containers)} containers on ${st.runtime}, in a pod's shape, 1 Hz relists, ${st.windowSeconds.toFixed(0)} s window)`);
    out.push('');
    out.push('| CPU % of one core | RSS MiB | of it anonymous MiB | of it file-backed MiB | heap used MiB | heap total MiB | event-loop lag p99 ms | relists in window | runtime | containers |');
    out.push('|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|');
    out.push(steadyRow(st));
  }
  const more = result.steadyRss;
  if (more !== undefined && more.length > 0) {
    out.push('');
    out.push('### The agent on larger nodes (simulated runtime, for its RSS)');
    out.push('');
    out.push('| CPU % of one core | RSS MiB | of it anonymous MiB | of it file-backed MiB | heap used MiB | heap total MiB | event-loop lag p99 ms | relists in window | runtime | containers |');
    out.push('|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|');
    for (const row of more) out.push(steadyRow(row));
  }
  const l = result.lease;
  if (l !== undefined) {
    out.push('');
    out.push('### Lease write cost (steady state, from the API stand-in\'s request record)');
    out.push('');
    out.push('| renewals | requests per renewal | body bytes per renewal | bytes on the wire per renewal (headers included) |');
    out.push('|---:|---:|---:|---:|');
    out.push(`| ${l.renewals} | ${fixed(l.requestsPerRenewal, 2)} | ${fixed(l.bodyBytesPerRenewal, 0)} | ${fixed(l.wireBytesPerRenewal, 0)} |`);
    out.push('');
    out.push(`Requests in the window: ${Object.entries(l.requests).map(([key, v]) => `${v} × \`${key}\``).join(', ') || 'none'}.`);
  }
  const lat = result.latencies;
  if (lat !== undefined && Object.keys(lat).length > 0) {
    out.push('');
    out.push('### Latencies (reported, not asserted)');
    out.push('');
    out.push('| runtime | agent spawn → listening ms | agent spawn → first lease write ms | runtime serving again → next lease write ms |');
    out.push('|---|---:|---:|---:|');
    for (const [name, v] of Object.entries(lat)) {
      out.push(`| ${name} | ${v.spawnToListeningMs.toFixed(0)} | ${v.spawnToFirstRenewalMs.toFixed(0)} | ${v.runtimeBackToRenewalMs.toFixed(0)} |`);
    }
  }
  const rss = result.rssBreakdown;
  if (rss !== undefined) {
    out.push('');
    out.push('### RSS breakdown (a fresh process per line, after a full GC)');
    out.push('');
    out.push('| imported | RSS MiB | over bare node MiB |');
    out.push('|---|---:|---:|');
    for (const line of rss) out.push(`| ${line.what} | ${line.rssMiB.toFixed(1)} | ${line.deltaMiB >= 0 ? '+' : ''}${line.deltaMiB.toFixed(1)} |`);
    if (st !== undefined) out.push(`| the running agent (steady state, above) | ${st.rssMiB.toFixed(1)} | +${(st.rssMiB - (rss[0]?.rssMiB ?? 0)).toFixed(1)} |`);
  }
  if (result.notes.length > 0) {
    out.push('');
    for (const note of result.notes) out.push(`- ${note}`);
  }
  return `${out.join('\n')}\n`;
}
