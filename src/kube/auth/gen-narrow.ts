// What client-node's KubeConfig (dist/config.js) imports from the generated API's index, from the
// two modules that define it, and nothing else: client-node-narrow.ts resolves config.js's import
// of the index here.
export { createConfiguration } from '@kubernetes/client-node/dist/gen/configuration.js';
export { ServerConfiguration } from '@kubernetes/client-node/dist/gen/servers.js';
