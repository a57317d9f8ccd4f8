// node:http, as its CommonJS exports.
//
// `import … from 'node:http'` builds an ES module namespace of every export, and building it
// reads http's lazy WebSocket, CloseEvent and MessageEvent properties, which load Node's bundled
// undici and its web streams: about 13 MiB of RSS in every agent, for classes it never uses
// (Node 24, after a full GC: +17.2 MiB over a bare node when imported, +3.7 MiB through
// process.getBuiltinModule). Modules that use http at run time take it from here;
// `import type … from 'node:http'` is erased and costs nothing.
import type * as Http from 'node:http';

export const http: typeof Http = process.getBuiltinModule('node:http');
