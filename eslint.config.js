import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'web/dist/', 'node_modules/', 'data/', 'coverage/', 'test-results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    // The platform (the payment gate, HTTP plumbing, chains, providers, the database) is a closed library:
    // features hook into it (openPayments' onSettled, structural ports), never the reverse.
    files: ['src/{payments,http,chains,providers,db,audit}/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/features/**'], message: 'The platform imports nothing from src/features (docs/decisions.md, "Code structure").' }] }],
    },
  },
  {
    // Feature boundaries (issue 28): a feature reaches another only through its index.ts, and owns its tables.
    // tables.ts files may import other features' tables for foreign keys (one database).
    files: ['src/features/**/*.ts'],
    ignores: ['src/features/*/tables.ts', '**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^\\.\\./[a-z-]+/(?!index\\.js$)', message: "Import another feature only through its index.ts (README, 'Where things are')." },
          ],
        },
      ],
    },
  },
  {
    // No function too long to read at once (issue 28); tests and generated types are exempt.
    files: ['src/**/*.ts', 'web/src/**/*.{ts,tsx}'],
    ignores: ['**/*.test.ts', '**/*.test.tsx', 'web/src/lib/api-types.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 100, skipBlankLines: true, skipComments: true }] },
  },
  {
    files: ['test/**', 'bench/**', '**/*.test.ts', 'scripts/**'],
    rules: { 'no-console': 'off', '@typescript-eslint/no-explicit-any': 'off' },
  },
);
