// `nodepulse agent --help`: the flags, their variables and defaults, read from the one key table
// so the help can never disagree with what the loader accepts.
import { AGENT_CONFIG_SPECS } from './agent-config-keys.ts';

/** True when argv asks for help; the CLI prints agentUsage() and exits 0 before loading config. */
export function isHelpRequest(argv: readonly string[]): boolean {
  return argv.some((a) => a === '--help' || a === '-h' || a === '-help');
}

export function agentUsage(): string {
  const lines = ['Usage: nodepulse agent [flags]', '', 'Flags (each also read from the variables shown, then from --config FILE):'];
  for (const spec of AGENT_CONFIG_SPECS) {
    const value = spec.boolean ? '[=true|false]' : ' VALUE';
    const def = spec.defaultText === undefined ? '' : ` (default ${spec.defaultText})`;
    lines.push(`  ${spec.flag}${value}`, `      ${spec.help}${def}; env ${spec.env.join(', ')}`);
  }
  lines.push(
    '  --config FILE',
    '      YAML or JSON file of camelCase keys; env NODEPULSE_CONFIG',
    '  --print-config',
    '      print the effective config and exit',
    '',
    'Precedence: flags > env > --config file > defaults. Durations are Go-style: 500ms, 10s, 3m.',
  );
  return `${lines.join('\n')}\n`;
}
