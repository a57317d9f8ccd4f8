// The stand-in as a process, for the demo: `node src/stand-ins/api-server/main.ts --port N [--token T]
// [--user NAME]`. Prints one JSON line `{"url": ...}` once it listens, and stops on SIGTERM or
// SIGINT. With --token, requests must carry that bearer token (user NAME, default
// `nodepulse`); without it, no authentication. Bad flags exit 2 with one line per problem.
import { SystemClock } from '../../clock/clock.ts';
import { startApiServer } from './api-server.ts';

interface Flags {
  port: number;
  token: string | undefined;
  user: string;
}

function parseFlags(argv: readonly string[]): { flags: Flags; problems: string[] } {
  const flags: Flags = { port: 0, token: undefined, user: 'nodepulse' };
  const problems: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const [name, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string => inline ?? argv[++i] ?? '';
    switch (name) {
      case '--port': {
        const v = value();
        const n = Number(v);
        if (!/^\d+$/.test(v) || n > 65535) problems.push(`--port: ${JSON.stringify(v)} must be an integer from 0 to 65535`);
        else flags.port = n;
        break;
      }
      case '--token': {
        const v = value();
        if (v === '') problems.push('--token: "" must not be empty');
        else flags.token = v;
        break;
      }
      case '--user':
        flags.user = value();
        break;
      default:
        problems.push(`${name}: flag must be one of --port, --token, --user`);
    }
  }
  return { flags, problems };
}

const { flags, problems } = parseFlags(process.argv.slice(2));
if (problems.length > 0) {
  for (const p of problems) process.stderr.write(`${p}\n`);
  process.exit(2);
}
const server = await startApiServer({
  clock: new SystemClock(),
  port: flags.port,
  ...(flags.token === undefined ? {} : { tokens: { [flags.token]: flags.user } }),
});
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
const stop = (): void => {
  server.close().then(() => process.exit(0), () => process.exit(1));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
