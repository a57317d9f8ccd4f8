// `npm run cluster -- COMMAND`: the test cluster by hand.
//
//   build                                   the binaries into the cache (cold: ~10 min; warm: seconds)
//   up [--nodes N] [--control-plane-only] [--socket-gid GID]
//                                           a cluster; the last line of stdout is KUBECONFIG=/path;
//                                           --socket-gid makes each node's containerd socket root:GID 0660
//   import ARCHIVE [--as NAME]              an image archive into every node's containerd (and tagged NAME)
//   down                                    everything up made, gone; exit 1 if anything stayed
//   status                                  what is up, from the state file
//
// Progress goes to stderr, so `eval "$(npm run -s cluster -- up | tail -1)"` works.
// Exit codes: 0 done; 1 the command failed; 2 a wrong flag or command.
import { parseArgs } from 'node:util';
import { SystemClock } from '../../src/clock/clock.ts';
import { buildBinaries } from './build-binaries.ts';
import { down, importImage, readState, up } from './cluster.ts';
import { isRunning } from './daemon.ts';
import { clusterDir } from './layout.ts';

const USAGE = 'usage: npm run cluster -- build | up [--nodes N] [--control-plane-only] [--socket-gid GID] | import ARCHIVE [--as NAME] | down | status';

async function main(argv: readonly string[]): Promise<number> {
  const clock = new SystemClock();
  const log = (line: string): void => {
    process.stderr.write(`[${((clock.monotonicMs() - t0) / 1000).toFixed(1).padStart(6)}s] ${line}\n`);
  };
  const t0 = clock.monotonicMs();
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        'nodes': { type: 'string', default: '1' },
        'control-plane-only': { type: 'boolean', default: false },
        'socket-gid': { type: 'string' },
        'as': { type: 'string' },
        'help': { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    return 2;
  }
  const [command, ...rest] = parsed.positionals;
  const operand = command === 'import' ? rest.shift() : undefined;
  if (parsed.values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (command === undefined || rest.length > 0) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const nodes = Number(parsed.values.nodes);
  if (!/^\d+$/.test(parsed.values.nodes)) {
    process.stderr.write(`nodes: ${parsed.values.nodes} must be a whole number\n`);
    return 2;
  }
  const gidText = parsed.values['socket-gid'];
  if (gidText !== undefined && !/^[1-9]\d{0,9}$/.test(gidText)) {
    process.stderr.write(`socket-gid: ${gidText} must be a positive whole number\n`);
    return 2;
  }

  switch (command) {
    case 'build': {
      const built = await buildBinaries({ log, clock });
      log(`${built.cached ? 'cached' : `built in ${built.buildSeconds} s`}: Kubernetes ${built.versions.kubernetes}, etcd ${built.versions.etcd}, ${built.goVersion}, ${(built.bytes / 1e6).toFixed(0)} MB`);
      process.stdout.write(`${built.dir}\n`);
      return 0;
    }
    case 'up': {
      const state = await up({ nodes, controlPlaneOnly: parsed.values['control-plane-only'], ...(gidText === undefined ? {} : { socketGid: Number(gidText) }), clock, log });
      log(`up in ${((clock.monotonicMs() - t0) / 1000).toFixed(1)} s: Kubernetes ${state.versions.kubernetes} at ${state.server}, ${state.nodes.length} node(s)`);
      process.stdout.write(`KUBECONFIG=${state.kubeconfig}\n`);
      return 0;
    }
    case 'import': {
      const state = readState();
      if (state === undefined) {
        process.stderr.write(`import: no cluster is up (${clusterDir()})\n`);
        return 1;
      }
      if (operand === undefined) {
        process.stderr.write(`import: an image archive must be given\n${USAGE}\n`);
        return 2;
      }
      const names = importImage(state, operand, parsed.values.as);
      log(`imported into ${state.nodes.length} node(s): ${names.join(', ')}`);
      return 0;
    }
    case 'down': {
      const report = await down({ clock, log });
      log(`down in ${((clock.monotonicMs() - t0) / 1000).toFixed(1)} s: ${report.stopped} daemons stopped, ${report.killed} processes killed, ${report.unmounted} mounts undone, removed ${report.removed.join(', ') || 'no network device'}`);
      if (report.left.length > 0) {
        process.stderr.write(`down left behind:\n${report.left.map((l) => `  ${l}`).join('\n')}\n`);
        return 1;
      }
      return 0;
    }
    case 'status': {
      const state = readState();
      if (state === undefined) {
        process.stdout.write(`no cluster is up (${clusterDir()})\n`);
        return 1;
      }
      process.stdout.write(`Kubernetes ${state.versions.kubernetes} at ${state.server}; KUBECONFIG=${state.kubeconfig}\n`);
      for (const n of state.nodes) process.stdout.write(`  node ${n.name} ${n.address}, pods ${n.podCidr}, runtime socket ${n.hostSocket}\n`);
      for (const d of state.daemons) process.stdout.write(`  ${d.name.padEnd(28)} pid ${String(d.pid).padEnd(8)} ${isRunning(d) ? 'running' : 'EXITED'}  ${d.log}\n`);
      return 0;
    }
    default:
      process.stderr.write(`command: ${command} must be build, up, import, down or status\n${USAGE}\n`);
      return 2;
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
