// Whether the agent DaemonSet is rolling out, so that the controller can pause its marking: a
// new agent version that crash-loops on some nodes silences their leases, and marking those
// nodes Unknown would hand a bad rollout to node-remediation tooling. A pure function of the
// DaemonSet's status and one remembered generation.
//
// | what the controller sees of the DaemonSet                  | rolling out? | why                                           |
// |------------------------------------------------------------|--------------|-----------------------------------------------|
// | not listed yet                                             | yes          | nothing yet says it is not                    |
// | no such DaemonSet                                          | no           | the agent is installed some other way         |
// | updateStrategy OnDelete                                    | no           | pods change only when deleted: `updated <     |
// |                                                            |              | desired` is its steady state                  |
// | observedGeneration < generation                            | yes          | its controller has not acted on the new spec  |
// | updatedNumberScheduled < desiredNumberScheduled            | yes          | old pods are still being replaced             |
// | numberAvailable < desiredNumberScheduled, at a generation  | yes          | the last new pods are not yet available       |
// | this controller saw rolling (rows above) and not settled   |              |                                               |
// | anything else                                              | no           | settled; the generation is remembered as such |
//
// - The same checks as `kubectl rollout status ds` (kubectl's DaemonSetStatusViewer), except
//   that unavailability alone counts only as the tail of a rollout this controller watched. An
//   agent pod that is unavailable long after its rollout settled is an agent failing on its own
//   node (or a node that is down): exactly what the controller must still mark.
// - A controller that starts after the last new pods were created but before they were all
//   available does not know the rollout was in progress, and does not pause for its tail.
// - A rollout that never completes (a crash-looping version stalls at maxUnavailable, or a node
//   that is down keeps its old pod) keeps marking paused: NodePulseControllerMarkingPaused says so.

/** What the controller keeps of the agent DaemonSet (the informer's projection). */
export interface AgentDaemonSet {
  readonly name: string;
  readonly generation: number;
  readonly observedGeneration: number;
  readonly onDelete: boolean;
  readonly desired: number;
  readonly updated: number;
  readonly available: number;
}

/** The apps/v1 DaemonSet fields the projection reads. */
export interface DaemonSetObject {
  readonly metadata: { readonly name?: string; readonly namespace?: string; readonly generation?: number };
  readonly spec?: { readonly updateStrategy?: { readonly type?: string } };
  readonly status?: {
    readonly observedGeneration?: number;
    readonly desiredNumberScheduled?: number;
    readonly updatedNumberScheduled?: number;
    readonly numberAvailable?: number;
  };
}

export function agentDaemonSet(ds: DaemonSetObject): AgentDaemonSet {
  return {
    name: `${ds.metadata.namespace ?? ''}/${ds.metadata.name ?? ''}`,
    generation: ds.metadata.generation ?? 0,
    observedGeneration: ds.status?.observedGeneration ?? 0,
    onDelete: ds.spec?.updateStrategy?.type === 'OnDelete',
    desired: ds.status?.desiredNumberScheduled ?? 0,
    updated: ds.status?.updatedNumberScheduled ?? 0,
    available: ds.status?.numberAvailable ?? 0,
  };
}

export interface RolloutReading {
  readonly rolling: boolean;
  /** Why, for the log line: `2 of 10 agent pods updated`. */
  readonly why: string;
  /** The generation seen rolling and not yet settled; remember it for the next reading. */
  readonly rollingGeneration: number | undefined;
}

/**
 * `seen`: 'unlisted' before the first list, undefined when the list holds no such DaemonSet.
 * `rollingGeneration`: what the previous reading returned (undefined at first).
 */
export function readRollout(seen: AgentDaemonSet | undefined | 'unlisted', rollingGeneration: number | undefined): RolloutReading {
  if (seen === 'unlisted') return { rolling: true, why: 'the agent DaemonSet has not been listed yet', rollingGeneration };
  if (seen === undefined) return { rolling: false, why: 'no agent DaemonSet', rollingGeneration: undefined };
  if (seen.onDelete) return { rolling: false, why: 'the agent DaemonSet updates OnDelete', rollingGeneration: undefined };
  if (seen.observedGeneration < seen.generation) {
    return { rolling: true, why: `generation ${seen.generation} not yet observed (observed ${seen.observedGeneration})`, rollingGeneration: seen.generation };
  }
  if (seen.updated < seen.desired) {
    return { rolling: true, why: `${seen.updated} of ${seen.desired} agent pods updated`, rollingGeneration: seen.generation };
  }
  if (seen.available < seen.desired && rollingGeneration === seen.generation) {
    return { rolling: true, why: `${seen.available} of ${seen.desired} updated agent pods available`, rollingGeneration };
  }
  return { rolling: false, why: `${seen.available} of ${seen.desired} agent pods available at generation ${seen.generation}`, rollingGeneration: undefined };
}
