// node:http, as its CommonJS exports.
//
// `import … from 'node:http'` builds an ES module namespace of every export, and building it
// reads http's lazy WebSocket, CloseEvent and MessageEvent properties, which load Node's bundled
// undici and its web streams: RSS in every agent, for classes it never uses (docs/bench.md, RSS
// breakdown, has both ways side by side). Modules that use http at run time take it from here;
// `import type … from 'node:http'` is erased and costs nothing.
import type * as Http from 'node:http';

export const http: typeof Http = process.getBuiltinModule('node:http');
