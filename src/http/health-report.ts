// The judgements behind /livez, /readyz and /healthz, and how their answers are written. Pure:
// rows in, a status code and a body out, so each has a table test.
//
// /livez, from every loop's liveness row (docs/design.md "Every loop's own liveness"):
//
// | a loop's row                  | within the start-up grace | after it |
// |-------------------------------|---------------------------|----------|
// | Alive                         | ok                        | ok       |
// | Unknown (never ticked)        | ok                        | failed   |
// | Stalled                       | failed                    | failed   |
// | Dead                          | failed                    | failed   |
//
// /livez is 200 only when every loop is ok. It reads loops only, never the runtime's health:
// restarting the agent because the runtime hangs fixes nothing (kubernetes PR 37865).
//
// /readyz, from whether the agent is started and serving, and the relist ledger's judgement:
//
// | the agent                          | the ledger's judgement                   | /readyz                      |
// |------------------------------------|------------------------------------------|------------------------------|
// | loops not started, or HTTP not up  | any                                      | 503: started failed          |
// | started and serving                | Healthy, Unhealthy, NotYetObserved       | 200                          |
// | started and serving                | CannotObserve                            | 503: runtime-observable      |
// |                                    |                                          | failed, with the ledger's    |
// |                                    |                                          | words                        |
//
// Why readiness follows CannotObserve and nothing else of the runtime: a DaemonSet rollout
// waits for each new pod to be ready (for minReadySeconds) before it moves on, so an agent
// version that cannot observe the runtime (the wrong uid, a decoder that cannot read the
// runtime's answers) stops the rollout on its first nodes. A runtime that is sick, though, is
// the node's fault, not the new version's, and must never stall a rollout: Unhealthy and
// NotYetObserved stay ready. Liveness never reads any of it: restarting an agent that cannot
// observe fixes nothing either, and restarts would only hide why.
//
// Bodies follow the Kubernetes components' health endpoints (k8s.io/apiserver/pkg/server/healthz):
// with ?verbose, one `[+]name ok` or `[-]name failed: reason` line per check, then
// `<endpoint> check passed` or `<endpoint> check failed`. Without ?verbose a pass is just `ok`,
// and a failure lists only the failed checks, then `<endpoint> check failed`. Unlike the
// apiserver, reasons are not withheld: they are loop states and runtime messages, no secrets, and
// an operator reading a probe failure in `kubectl describe pod` needs them.
import type { Liveness } from '../liveness/liveness.ts';
import type { RuntimeHealthState } from '../relist/relist-ledger.ts';

export interface HealthCheck {
  readonly name: string;
  readonly ok: boolean;
  readonly reason: string;
}

export interface HealthAnswer {
  readonly status: 200 | 503;
  readonly body: string;
}

/** One /livez check per loop row. */
export function livezChecks(loops: readonly Liveness[], withinStartupGrace: boolean): HealthCheck[] {
  return loops.map((loop) => {
    if (loop.state === 'Alive') return { name: loop.name, ok: true, reason: loop.reason };
    if (loop.state === 'Unknown' && withinStartupGrace) return { name: loop.name, ok: true, reason: `Unknown within the start-up grace: ${loop.reason}` };
    const after = loop.state === 'Unknown' ? ' after the start-up grace' : '';
    return { name: loop.name, ok: false, reason: `${loop.state}${after}: ${loop.reason}` };
  });
}

/** The relist ledger's judgement, as the health checks read it (RuntimeHealth's state and message). */
export interface RuntimeReading {
  readonly state: RuntimeHealthState;
  readonly message: string;
}

/** The /readyz checks (the second table in the header): started, then runtime-observable. */
export function readyzChecks(started: { readonly ready: boolean; readonly reason: string }, runtime: RuntimeReading): HealthCheck[] {
  const observable = runtime.state !== 'CannotObserve';
  return [
    { name: 'started', ok: started.ready, reason: started.reason },
    { name: 'runtime-observable', ok: observable, reason: observable ? `${runtime.state}: the agent observes the runtime` : runtime.message },
  ];
}

export interface HealthzInput {
  readonly loops: readonly Liveness[];
  readonly withinStartupGrace: boolean;
  /** The relist ledger's judgement (RuntimeHealth's state and message). */
  readonly runtime: RuntimeReading;
  /** Whether the lease is being renewed, and if not, why (withheld by the gate, or the API's error). */
  readonly lease: { readonly renewing: boolean; readonly reason: string };
}

/**
 * The /healthz checks: each loop as /livez judges it, then `runtime` (ok only while the ledger
 * says Healthy) and `lease-renewing` (ok only while the lease is renewed). Unlike /livez and
 * /readyz, /healthz does reflect the runtime: it answers "is this node's heartbeat moving?".
 */
export function healthzChecks(input: HealthzInput): HealthCheck[] {
  return [
    ...livezChecks(input.loops, input.withinStartupGrace),
    { name: 'runtime', ok: input.runtime.state === 'Healthy', reason: `${input.runtime.state}: ${input.runtime.message}` },
    { name: 'lease-renewing', ok: input.lease.renewing, reason: input.lease.reason },
  ];
}

/** Writes checks as a Kubernetes component does; 200 only when every check passed. */
export function renderHealth(endpoint: string, checks: readonly HealthCheck[], verbose: boolean): HealthAnswer {
  const passed = checks.every((c) => c.ok);
  if (passed && !verbose) return { status: 200, body: 'ok\n' };
  const shown = verbose ? checks : checks.filter((c) => !c.ok);
  const lines = shown.map((c) => (c.ok ? `[+]${c.name} ok` : `[-]${c.name} failed: ${c.reason}`));
  lines.push(`${endpoint} check ${passed ? 'passed' : 'failed'}`);
  return { status: passed ? 200 : 503, body: `${lines.join('\n')}\n` };
}
