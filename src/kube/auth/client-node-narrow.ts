// Loads client-node's KubeConfig without the generated API it does not use.
//
// `@kubernetes/client-node/dist/config.js` (KubeConfig) imports two names from the generated API's
// index, `createConfiguration` and `ServerConfiguration`, and the index re-exports all of it: a
// thousand modules of models and API classes that reading a kubeconfig and authenticating with it
// never touch. Loading them is most of what KubeConfig costs: measured here (Node 24, a fresh
// process, a shared 2-core machine under load), importing config.js took 3.3–4.4 s and 125–129 MiB
// of RSS with the index, 1.0–1.6 s and 81–82 MiB without it.
//
// So before a reader or an agent given a kubeconfig imports KubeConfig, narrowClientNode()
// registers a resolve hook (node:module registerHooks, Node's own extension point for module
// loading) that answers config.js's import of `./gen/index.js`, and only that import, with
// gen-narrow.ts: the same two names re-exported from the two small modules that define them.
// Everything else is client-node's own code, unchanged: KubeConfig reads, merges and authenticates
// as before, with the very same createConfiguration and ServerConfiguration (the modules that
// define them are shared by URL with the full index, if anything else in the process loads it).
//
// | module importing `./gen/index.js`       | gets                                             |
// |------------------------------------------|--------------------------------------------------|
// | client-node's dist/config.js             | gen-narrow.ts: createConfiguration, ServerConfiguration |
// | anything else (client-node's index.js)   | the generated API's index, in full               |
//
// Failure modes: a client-node whose config.js imports another name from the index fails to link
// at once (SyntaxError: does not provide an export named …), never at a later call, and
// test/package/kubeconfig-modules.test.ts fails first. A bundled build has no such URL to match:
// the hook then never applies and nothing changes.
import { registerHooks } from 'node:module';

const CONFIG_MODULE = '/@kubernetes/client-node/dist/config.js';
const GEN_INDEX = '/@kubernetes/client-node/dist/gen/index.js';
const NARROW = new URL(`./gen-narrow${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url).href;

let registered = false;

/** Whether a resolved import is config.js's of the generated API's index (see the header). */
export function isConfigImportOfGenIndex(parentUrl: string | undefined, resolvedUrl: string): boolean {
  return parentUrl !== undefined && parentUrl.endsWith(CONFIG_MODULE) && resolvedUrl.endsWith(GEN_INDEX);
}

/** Registers the hook of the header, once per process. Call it before importing KubeConfig. */
export function narrowClientNode(): void {
  if (registered) return;
  registered = true;
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context);
      return isConfigImportOfGenIndex(context.parentURL, resolved.url) ? { ...resolved, url: NARROW } : resolved;
    },
  });
}
