// ESLint flat config: typescript-eslint's type-aware recommended rules over src/ (the type checker
// itself is `tsc --noEmit`, run beside it by .ci/run).  Formatting is prettier's (`npm run lint`).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
    { ignores: ['dist/**', 'out/**', 'node_modules/**', '*.vsix'] },
    {
        files: ['src/**/*.ts'],
        extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
        languageOptions: {
            parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
        },
        rules: {
            // A promise the extension starts and does not await must say so (`void`), or be awaited.
            '@typescript-eslint/no-floating-promises': 'error',
            '@typescript-eslint/switch-exhaustiveness-check': 'error',
            eqeqeq: ['error', 'smart'],
        },
    },
    {
        files: ['*.mjs'],
        extends: [js.configs.recommended],
        languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    },
);
