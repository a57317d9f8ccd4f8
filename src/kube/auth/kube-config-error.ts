// The one error for credentials that cannot be had at start-up: a kubeconfig that cannot be read
// or does not hold what kubectl needs (load-kubeconfig.ts, kubeconfig-entries.ts), or a pod whose
// service account is incomplete (in-cluster.ts). Its message is one line naming the file, the
// entry or the variable and what is wrong; the commands print it and exit.

export class KubeConfigError extends Error {
  readonly code = 'kubeconfig_invalid';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KubeConfigError';
  }
}
