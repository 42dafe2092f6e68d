// @ts-check
import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'coverage/', '.data/'] },
  eslint.configs.recommended,
  tseslint.configs.recommended,
  {
    // A leading underscore marks a parameter a signature needs or a property a rest pattern leaves out.
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // A promise nobody awaits is a lost callback or a half-done movement. These rules need type information (about
    // 20 s for the whole tree on 2 CPUs); the rest of recommendedTypeChecked (no-unsafe-*) would flag every raw SQL
    // result, which is typed any by TypeORM.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    // Tests and benchmarks read JSON bodies and report documents whose shape is what is being checked (supertest types
    // every body as any too); the application code gets no such leave.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  { files: ['**/*.mjs'], languageOptions: { globals: globals.node } },
);
