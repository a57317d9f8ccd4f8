// Loaded with `--import` into a process under test: appends the URL of every module the process
// loads (ES modules and require()d CommonJS alike) to the file named by NODEPULSE_MODULE_LOG, one
// a line, as it loads, so a test can tell what a run did and did not load, even after a crash.
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const log = process.env['NODEPULSE_MODULE_LOG'];
if (log !== undefined && log !== '') {
  registerHooks({
    load(url, context, nextLoad) {
      appendFileSync(log, `${url}\n`);
      return nextLoad(url, context);
    },
  });
}
