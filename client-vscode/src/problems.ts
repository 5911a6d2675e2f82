// The server's `coherence/problem` notification: a problem the user fixes in the settings (no API key,
// no model, a provider that is down, a check that failed). Shown once by the server, here with the
// buttons that lead to the fix.
import { commands, window } from 'vscode';
import { EXTENSION_ID } from './common/constants';
import { getOutputChannel } from './common/log';

export const PROBLEM_NOTIFICATION = 'coherence/problem';
export const OPEN_SETTINGS = 'Open Settings';
export const SHOW_OUTPUT = 'Show Output';
export const USE_EDITOR_MODEL = "Use the editor's model";

/** A fix the message offers beside Open Settings (the first run: "Use the editor's model"). */
export interface ProblemAction {
    title: string;
    run(): Promise<void>;
}

export async function showProblem(
    params: unknown,
    offer?: () => Promise<ProblemAction | undefined>,
): Promise<void> {
    const p = (params && typeof params === 'object' ? params : {}) as { message?: unknown; level?: unknown };
    if (typeof p.message !== 'string' || !p.message) {
        return;
    }
    const show =
        p.level === 'error'
            ? window.showErrorMessage
            : p.level === 'info'
              ? window.showInformationMessage
              : window.showWarningMessage;
    const action = offer ? await offer() : undefined;
    const choice = await show(p.message, ...(action ? [action.title] : []), OPEN_SETTINGS, SHOW_OUTPUT);
    if (action && choice === action.title) {
        await action.run();
    } else if (choice === OPEN_SETTINGS) {
        await commands.executeCommand('workbench.action.openSettings', `@ext:${EXTENSION_ID}`);
    } else if (choice === SHOW_OUTPUT) {
        getOutputChannel()?.show();
    }
}
