// The process's CPU time, as the three counters prom-client's default processCpuTotal collector
// exports, without that collector.
//
// Why not prom-client's: it loads @opentelemetry/api to put trace exemplars on the counters, a
// package the agent would carry on every node for a feature it never turns on (docs/bench.md
// measures it). The families, their types and help texts are prom-client's, so dashboards and the
// benchmark read them unchanged; a test holds the two collectors' families together.
//
// | family                           | value                                         |
// |----------------------------------|-----------------------------------------------|
// | process_cpu_user_seconds_total   | user CPU time of the process since it started |
// | process_cpu_system_seconds_total | system CPU time                               |
// | process_cpu_seconds_total        | the two together                              |
//
// One difference, on purpose: prom-client's counters start from the CPU the process had used
// when the collector was registered; these count from the process's start, as a counter named
// process_cpu_seconds_total means elsewhere. Values are read at scrape time (process.cpuUsage()).
import type { Registry } from 'prom-client';
import { Counter } from './prom-client.ts';

export function registerProcessCpu(registry: Registry): void {
  let last = { user: 0, system: 0 };
  const system = new Counter({ name: 'process_cpu_system_seconds_total', help: 'Total system CPU time spent in seconds.', registers: [registry] });
  const total = new Counter({ name: 'process_cpu_seconds_total', help: 'Total user and system CPU time spent in seconds.', registers: [registry] });
  // One collect() moves all three, as prom-client's does.
  new Counter({
    name: 'process_cpu_user_seconds_total',
    help: 'Total user CPU time spent in seconds.',
    registers: [registry],
    collect() {
      const now = process.cpuUsage();
      const user = (now.user - last.user) / 1e6;
      const sys = (now.system - last.system) / 1e6;
      last = now;
      this.inc(user);
      system.inc(sys);
      total.inc(user + sys);
    },
  });
}
