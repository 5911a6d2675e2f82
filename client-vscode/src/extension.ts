// Entry point: wires the output channel, status bar, server manager, commands and
// configuration / interpreter change listeners.
import { ExtensionContext, commands, workspace } from 'vscode';
import { registerAlternatives } from './alternatives';
import { ClientCommands } from './common/constants';
import { createOutputChannel, disposeOutputChannel, traceInfo } from './common/log';
import { initializePython, onDidChangePythonInterpreter } from './common/python';
import { ServerManager } from './common/server';
import { affectsModel, getSettings, needsRestart } from './common/settings';
import { StatusBar } from './common/status';

const RESTART_DEBOUNCE_MS = 500;

let manager: ServerManager | undefined;

export function activate(context: ExtensionContext): void {
    const channel = createOutputChannel();
    context.subscriptions.push(disposeOutputChannel());
    traceInfo(
        `Coherence extension ${String((context.extension.packageJSON as { version?: unknown }).version)} activating.`,
    );

    registerAlternatives(context.subscriptions);

    const status = new StatusBar();
    context.subscriptions.push(status);

    const server = new ServerManager(context, channel, status);
    manager = server;

    // Settings edits come in bursts (typing in the settings UI): restart once they settle. This also
    // lets the client send its didChangeConfiguration before the old server is stopped.
    let restartTimer: NodeJS.Timeout | undefined;
    const scheduleRestart = (reason: string): void => {
        clearTimeout(restartTimer);
        restartTimer = setTimeout(() => void server.restart(reason), RESTART_DEBOUNCE_MS);
    };
    context.subscriptions.push({ dispose: () => clearTimeout(restartTimer) });

    context.subscriptions.push(
        // Restricted Mode: the extension is active (package.json: untrustedWorkspaces "limited") only
        // to say that it is off; trusting the folder starts the server.
        workspace.onDidGrantWorkspaceTrust(() => void server.restart('the workspace was trusted')),
        commands.registerCommand(ClientCommands.restart, () => server.restart('restart command')),
        commands.registerCommand(ClientCommands.showOutput, () => channel.show()),
        workspace.onDidChangeConfiguration((e) => {
            if (needsRestart(e)) {
                scheduleRestart('coherence.enable, interpreter or importStrategy changed');
            } else if (affectsModel(e) && server.needsLlm()) {
                scheduleRestart('a model is configured, and the bundled server has no litellm');
            }
        }),
        onDidChangePythonInterpreter(() => {
            if (getSettings().interpreter.length === 0) {
                scheduleRestart('Python extension interpreter changed');
            }
        }),
    );

    // Activating the Python extension can take a while: do not hold up activation for it.
    void initializePython(context.subscriptions).finally(() => server.restart('activation'));
}

export async function deactivate(): Promise<void> {
    await manager?.stop();
    manager = undefined;
}
