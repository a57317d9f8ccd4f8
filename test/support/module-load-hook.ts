// A module-load hook for a process under test: `node --import test/support/module-load-hook.ts …`
// with MODULE_LOAD_LOG=<file> in its environment appends the URL of every module the process
// loads to that file, one per line, as it loads it (ES modules, require()d CommonJS and
// built-ins alike: node:module's registerHooks sees both loaders). Written as it happens, so
// the record survives however the process ends. Without MODULE_LOAD_LOG it does nothing.
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const logPath = process.env['MODULE_LOAD_LOG'];
if (logPath !== undefined && logPath !== '') {
  registerHooks({
    load(url, context, nextLoad) {
      appendFileSync(logPath, `${url}\n`);
      return nextLoad(url, context);
    },
  });
}
