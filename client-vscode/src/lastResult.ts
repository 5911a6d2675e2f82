// "Coherence: Show Last Result": the server answers with the result (its fields and `markdown`, the
// hover's text) of the function under the cursor, or else the latest one checked; this opens it as
// a Markdown document the user can read, search and keep.
import { window, workspace } from 'vscode';
import { traceInfo } from './common/log';

type Send = (args: unknown[]) => Promise<unknown>;

interface ShownResult {
    name?: unknown;
    qualname?: unknown;
    path?: unknown;
    line?: unknown;
    markdown?: unknown;
}

function section(r: ShownResult): string {
    const name = typeof r.qualname === 'string' && r.qualname ? r.qualname : typeof r.name === 'string' ? r.name : '?';
    const where = typeof r.path === 'string' ? ` (${r.path}${typeof r.line === 'number' ? `:${r.line}` : ''})` : '';
    const body = typeof r.markdown === 'string' ? r.markdown : '';
    const json = { ...(r as Record<string, unknown>) };
    delete json.markdown;
    return `## ${name}${where}\n\n${body}\n\n<details><summary>The full result (JSON)</summary>\n\n\`\`\`json\n${JSON.stringify(json, null, 2)}\n\`\`\`\n\n</details>\n`;
}

/** The document's text for the server's reply: one result, or `{functions: [...]}` for a file. */
export function lastResultText(reply: unknown): string | undefined {
    if (!reply || typeof reply !== 'object') {
        return undefined;
    }
    const functions = (reply as { functions?: unknown }).functions;
    const results = (Array.isArray(functions) ? functions : [reply]).filter(
        (r): r is ShownResult => !!r && typeof r === 'object',
    );
    if (results.length === 0) {
        return undefined;
    }
    return `# Coherence: last result\n\n${results.map(section).join('\n')}`;
}

export async function showLastResult(args: unknown[], send: Send): Promise<unknown> {
    // From the palette (no arguments), the function under the cursor comes first: after a batch
    // of checks, the latest one to finish is seldom the function the user is looking at.
    let reply: unknown = undefined;
    const editor = window.activeTextEditor;
    if (args.length === 0 && editor?.document.languageId === 'python') {
        reply = await send([editor.document.uri.toString(), { line: editor.selection.active.line }]);
    }
    if (lastResultText(reply) === undefined) {
        reply = await send(args);
    }
    const text = lastResultText(reply);
    if (text === undefined) {
        void window.showInformationMessage('Coherence: no result yet. Save a file with a marked function to check it.');
        return reply;
    }
    traceInfo('Showing the last result.');
    const doc = await workspace.openTextDocument({ language: 'markdown', content: text });
    await window.showTextDocument(doc, { preview: true });
    return reply;
}
