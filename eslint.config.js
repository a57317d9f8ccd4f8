// Lint rules: typescript-eslint's recommended set, plus the habits of STYLE.md that a
// linter can check (no default exports, no floating promises' cousins, no console in src/).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'bundle/**', 'node_modules/**', '.tools/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Use named exports only.' },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'eqeqeq': ['error', 'always'],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**'],
    rules: {
      'no-console': 'error',
    },
  },
  {
    // The fence around the stand-ins (src/README.md): product code names no stand-in and not the
    // tests' clock. This sees static imports only; test/package/import-fence.test.ts walks the
    // whole import graph, import() included.
    files: ['src/**/*.ts'],
    ignores: ['src/stand-ins/**', 'src/demo/**', 'src/cli/demo-command.ts', 'src/**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { regex: '(^|/)stand-ins/', message: 'Product code must not import a stand-in: only the demo, tests, bench and scripts may.' },
          { regex: '(^|/)clock/manual-clock\\.ts$', message: "The manual clock is the tests' clock: product code takes a Clock." },
        ],
      }],
    },
  },
  {
    files: ['eslint.config.js'],
    rules: { 'no-restricted-syntax': 'off' },
  },
);
