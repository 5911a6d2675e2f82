// Test only (tests/e2e/e2e.mjs, step "lm"): a language model chat provider, vendor
// "coherence-recorded", family "recorded", whose replies are the recorded candidates
// (COHERENCE_E2E_RECORDED: a .jsonl in the corpus schema) of the function the prompt asks for, in
// turn.  Every request is appended to COHERENCE_E2E_LM_LOG as one JSON line, for the e2e to read
// what coherence sent.  Where the editor has no vscode.lm.registerLanguageModelChatProvider, the
// log says so and nothing is registered.
'use strict';
const fs = require('fs');
const vscode = require('vscode');

const VENDOR = 'coherence-recorded';

function record(entry) {
    const file = process.env.COHERENCE_E2E_LM_LOG;
    if (file) fs.appendFileSync(file, `${JSON.stringify(entry)}\n`);
}

function textOf(message) {
    const parts = Array.isArray(message.content) ? message.content : [message.content];
    return parts.map((p) => (typeof p === 'string' ? p : p && typeof p.value === 'string' ? p.value : '')).join('');
}

function activate(context) {
    if (!vscode.lm || typeof vscode.lm.registerLanguageModelChatProvider !== 'function') {
        record({ unsupported: `VS Code ${vscode.version} has no vscode.lm.registerLanguageModelChatProvider` });
        return;
    }
    const rows = fs
        .readFileSync(process.env.COHERENCE_E2E_RECORDED, 'utf8')
        .split('\n')
        .filter((line) => line.trim())
        .map((line) => JSON.parse(line));
    const next = new Map();
    const provider = {
        provideLanguageModelChatInformation() {
            return [
                {
                    id: 'recorded-samples',
                    name: 'Recorded samples',
                    family: 'recorded',
                    version: '1',
                    maxInputTokens: 100000,
                    maxOutputTokens: 8000,
                    capabilities: {},
                },
            ];
        },
        async provideLanguageModelChatResponse(model, messages, options, progress, token) {
            const prompt = messages.map(textOf).join('\n');
            // the prompt names its function ("Write the function `name`")
            const row = rows.find((r) => prompt.includes(`function \`${r.entry_point}\``));
            record({
                function: row ? row.entry_point : null,
                temperature: options.modelOptions ? options.modelOptions.temperature : undefined,
                initiator: options.requestInitiator,
                roles: messages.map((m) => m.role),
                prompt,
            });
            if (!row) throw new Error('no recorded samples for this prompt');
            if (token.isCancellationRequested) return;
            const i = next.get(row.entry_point) || 0;
            next.set(row.entry_point, i + 1);
            const candidate = row.candidates[i % row.candidates.length];
            progress.report(new vscode.LanguageModelTextPart('```python\n' + candidate + '\n```'));
        },
        provideTokenCount(model, text) {
            return Math.ceil((typeof text === 'string' ? text : textOf(text)).length / 4);
        },
    };
    context.subscriptions.push(vscode.lm.registerLanguageModelChatProvider(VENDOR, provider));
    record({ registered: VENDOR, vscode: vscode.version });
}

module.exports = { activate };
