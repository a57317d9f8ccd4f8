// The lease gate: may this node's Lease be renewed right now? A pure judgement over the two
// readings that docs/design.md names, and nothing else: the relister loop's Liveness (from its
// heartbeat) and the relist ledger's RuntimeHealth. There is no second threshold here; the
// ledger's verdict is used as it stands.
//
// | relister's Liveness      | runtime (the ledger's judgement) | the lease                           |
// |--------------------------|----------------------------------|-------------------------------------|
// | Alive                    | Healthy                          | renew                               |
// | Alive                    | NotYetObserved                   | withhold: runtime-not-yet-observed  |
// | Alive                    | Unhealthy                        | withhold: runtime-unhealthy         |
// | Alive                    | CannotObserve                    | withhold: runtime-cannot-observe    |
// | Unknown                  | any                              | withhold: relister-unknown          |
// | Stalled                  | any                              | withhold: relister-stalled          |
// | Dead                     | any                              | withhold: relister-dead             |
//
// The relister's row is read first: a stalled or dead loop vouches for nothing, whatever the
// ledger last recorded (a wedged loop leaves a Healthy reading behind until it ages out, and
// the lease must not ride on it). The caller checks the gate again just before every write.
//
// CannotObserve withholds too: the Lease carries progress, and an agent that cannot observe
// the runtime has seen none. Readers then judge the lease stale as for any silent node; what the
// node's condition says (Unknown/AgentCannotObserve, never True) is what tells the two apart.
import type { Liveness } from '../liveness/liveness.ts';
import type { RuntimeHealth } from '../relist/relist-ledger.ts';

export type WithholdReason =
  | 'relister-unknown'
  | 'relister-stalled'
  | 'relister-dead'
  | 'runtime-not-yet-observed'
  | 'runtime-unhealthy'
  | 'runtime-cannot-observe';

export type GateVerdict =
  | { readonly action: 'renew' }
  | {
      readonly action: 'withhold';
      /** A stable key, for logs and metrics. */
      readonly reason: WithholdReason;
      /** The human reading behind it: the loop's or the ledger's own words. */
      readonly message: string;
    };

export function leaseGate(relister: Liveness, runtime: RuntimeHealth): GateVerdict {
  switch (relister.state) {
    case 'Unknown':
      return { action: 'withhold', reason: 'relister-unknown', message: `relister loop: ${relister.reason}` };
    case 'Stalled':
      return { action: 'withhold', reason: 'relister-stalled', message: `relister loop: ${relister.reason}` };
    case 'Dead':
      return { action: 'withhold', reason: 'relister-dead', message: `relister loop: ${relister.reason}` };
    case 'Alive':
      break;
  }
  switch (runtime.state) {
    case 'Healthy':
      return { action: 'renew' };
    case 'NotYetObserved':
      return { action: 'withhold', reason: 'runtime-not-yet-observed', message: runtime.message };
    case 'Unhealthy':
      return { action: 'withhold', reason: 'runtime-unhealthy', message: runtime.message };
    case 'CannotObserve':
      return { action: 'withhold', reason: 'runtime-cannot-observe', message: runtime.message };
  }
}
