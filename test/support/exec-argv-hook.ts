// A hook for a process under test, loaded with NODE_OPTIONS=--import=<this file>: with
// EXEC_ARGV_LOG=<file> in its environment it writes the process's process.execArgv (the Node.js
// options on its command line, or in a script's shebang; not NODE_OPTIONS) and the environment it
// started with to that file, as JSON ({ execArgv, env }), before the program runs. Without
// EXEC_ARGV_LOG it does nothing.
import { writeFileSync } from 'node:fs';

const logPath = process.env['EXEC_ARGV_LOG'];
if (logPath !== undefined && logPath !== '') writeFileSync(logPath, JSON.stringify({ execArgv: process.execArgv, env: process.env }));
