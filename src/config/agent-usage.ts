// `nodepulse agent --help`: the flags, their variables and defaults, read from the one key table
// so the help can never disagree with what the loader accepts.
import { AGENT_CONFIG_SPECS, CONFIG_FILE_SPEC, PRINT_CONFIG_SPEC } from './agent-config-keys.ts';
import { flagsHelp, GRAMMAR_HELP } from './command-flags.ts';

export function agentUsage(): string {
  return [
    'Usage: nodepulse agent [flags]',
    '',
    'Flags (each also read from the variables shown, then from --config FILE):',
    flagsHelp([...AGENT_CONFIG_SPECS, CONFIG_FILE_SPEC, PRINT_CONFIG_SPEC]),
    'Precedence: flags > env > --config file > defaults. Durations are Go-style: 500ms, 10s, 3m.',
    GRAMMAR_HELP,
    '',
  ].join('\n');
}
