// Starting, stopping and restarting the language client for `<python> -m coherence serve`.
import {
    CancellationToken,
    ConfigurationTarget,
    Disposable,
    ExtensionContext,
    LogOutputChannel,
    commands,
    window,
    workspace,
} from 'vscode';
import {
    CloseAction,
    CloseHandlerResult,
    ConfigurationParams,
    ErrorAction,
    ErrorHandler,
    ErrorHandlerResult,
    Executable,
    LanguageClient,
    LanguageClientOptions,
    Middleware,
    RevealOutputChannelOn,
    State,
} from 'vscode-languageclient/node';
import {
    CONFIG_SECTION,
    CONTEXT_SERVER_RUNNING,
    EDITOR_COMMANDS,
    EXTENSION_ID,
    SERVER_ARGS,
    SERVER_ID,
    SERVER_NAME,
    STATUS_NOTIFICATION,
    ServerCommands,
} from './constants';
import { showAlternatives } from '../alternatives';
import { confirmCheckWorkspace } from '../workspaceCheck';
import { showLastResult } from '../lastResult';
import { PROBLEM_NOTIFICATION, ProblemAction, USE_EDITOR_MODEL, showProblem } from '../problems';
import { RAISE_COST_CAP_REQUEST, raiseCostCap } from '../costCap';
import { SAMPLE_REQUEST, answerSample, editorChatModels, useEditorModel } from '../editorModels';
import { traceError, traceInfo, traceVerbose, traceWarn } from './log';
import { ServerLaunch, bundledLaunch } from './bundled';
import { ImportCheck, Interpreter, checkImportable, logImportFailure, resolveInterpreter } from './python';
import {
    configurationItem,
    enabledInSomeFolder,
    explicitSettings,
    getProjectRoot,
    getServerCwd,
    getSettings,
    modelConfigured,
} from './settings';
import { StatusBar, parseStatusParams } from './status';

/** What the server gets as `initializationOptions`. */
export interface InitializationOptions {
    /** Every declared key: the value the user set, or null (see `explicitSettings`). */
    settings: Record<string, unknown>;
    /** VS Code's workspace trust: the server lets a trusted workspace's own [tool.coherence] choose
     * the model, api_base and interpreter (the extension only runs in trusted workspaces). */
    workspaceTrusted: boolean;
    /** This client answers `coherence/raiseCostCap` by writing coherence.maxCostUsd (costCap.ts). */
    raiseCostCap: boolean;
    /** This client shows `coherence/problem` with Open Settings and Show Output (problems.ts). */
    problemActions: boolean;
    /** This client answers `coherence/sample` from the editor's chat models (editorModels.ts). */
    sampleRequest: boolean;
}

const STOP_TIMEOUT_MS = 2000;
const USE_BUNDLED = 'Use the bundled server';
const MAX_RESTARTS = 4;
const RESTART_WINDOW_MS = 3 * 60 * 1000;

/**
 * Like the library's default handler (restart a crashed server up to 4 times in 3 minutes), except
 * that a server that never got running is not restarted: a missing subcommand or a broken install
 * would otherwise pop up a notification per retry. The client then reports the failure once
 * ("couldn't create connection to server") and ServerManager marks the status bar.
 */
class ServerErrorHandler implements ErrorHandler {
    private restarts: number[] = [];
    hasRun = false;

    error(_error: Error, _message: unknown, count: number | undefined): ErrorHandlerResult {
        return { action: count !== undefined && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown };
    }

    closed(): CloseHandlerResult {
        if (!this.hasRun) {
            return { action: CloseAction.DoNotRestart, handled: true };
        }
        const now = Date.now();
        this.restarts = [...this.restarts.filter((t) => now - t <= RESTART_WINDOW_MS), now];
        if (this.restarts.length > MAX_RESTARTS) {
            return {
                action: CloseAction.DoNotRestart,
                message: `The Coherence server crashed ${this.restarts.length} times in the last 3 minutes and will not be restarted. See the output, then run "Coherence: Restart Server".`,
            };
        }
        return { action: CloseAction.Restart, message: 'The Coherence server exited; restarting it.', handled: true };
    }
}

/**
 * Palette invocations of checkFunction/checkFile/showAlternatives carry no arguments. Fill in the
 * active Python editor the way the server's own code lenses call them: `[uri, line]` (the cursor's
 * 0-based line; the server takes the marked function at or around it), checkFile `[uri]`.
 * showAlternatives is rendered here, in a diff view (alternatives.ts).
 */
function executeCommandMiddleware(): Middleware['executeCommand'] {
    return (command, args, next) => {
        if (args.length === 0 && EDITOR_COMMANDS.has(command)) {
            const editor = window.activeTextEditor;
            if (!editor || editor.document.languageId !== 'python') {
                void window.showWarningMessage('Coherence: open a Python file to check.');
                return undefined;
            }
            const uri = editor.document.uri.toString();
            args = command === ServerCommands.checkFile ? [uri] : [uri, editor.selection.active.line];
        }
        traceVerbose(`executeCommand ${command}`, args);
        if (command === ServerCommands.showAlternatives) {
            return showAlternatives(args, (a) => Promise.resolve(next(command, a) as unknown));
        }
        if (command === ServerCommands.showLastResult) {
            return showLastResult(args, (a) => Promise.resolve(next(command, a) as unknown));
        }
        if (command === ServerCommands.checkWorkspace && !isConfirmed(args)) {
            return confirmCheckWorkspace((c, a) => Promise.resolve(next(c, a) as unknown));
        }
        // the server's reply, passed through untouched
        // eslint-disable-next-line @typescript-eslint/no-unsafe-return
        return next(command, args);
    };
}

function isConfirmed(args: unknown[]): boolean {
    const first = args[0] as { confirmed?: unknown } | undefined;
    return typeof first === 'object' && first !== null && first.confirmed === true;
}

/** Answers `workspace/configuration` for the "coherence" section with the explicitly set settings
 * (null for the others, so pyproject decides them), variables such as `${workspaceFolder}` resolved. */
function configurationMiddleware(): NonNullable<Middleware['workspace']>['configuration'] {
    return async (params: ConfigurationParams, token, next) => {
        const result = await next(params, token);
        if (!Array.isArray(result)) {
            return result;
        }
        return result.map((item: unknown, i) => {
            const request = params.items[i];
            return request?.section === CONFIG_SECTION ? configurationItem(request.scopeUri) : item;
        });
    };
}

/** A `coherence/problem` that says what the server lacks: litellm (the `llm` extra). */
function needsLlm(params: unknown): boolean {
    return typeof params === 'object' && params !== null && (params as { needs?: unknown }).needs === 'llm';
}

/** A `coherence/problem` that says no model is configured (the first run). */
function needsModel(params: unknown): boolean {
    return typeof params === 'object' && params !== null && (params as { needs?: unknown }).needs === 'model';
}

/** The first run: with chat models in the editor, "no model" offers them. */
async function editorModelOffer(): Promise<ProblemAction | undefined> {
    return (await editorChatModels()).length > 0 ? { title: USE_EDITOR_MODEL, run: useEditorModel } : undefined;
}

/** The library logs every exit of the server as an error, a normal stop (code 0) included. */
export class CoherenceLanguageClient extends LanguageClient {
    override error(message: string, data?: unknown, showNotification?: boolean | 'force'): void {
        if (message === 'Server process exited with code 0.') {
            this.info(message);
            return;
        }
        super.error(message, data, showNotification);
    }
}

export function createClient(
    launch: ServerLaunch,
    cwd: string,
    channel: LogOutputChannel,
    errorHandler: ErrorHandler,
): LanguageClient {
    const executable: Executable = {
        command: launch.command,
        args: launch.args,
        // No `transport`: TransportKind.stdio would append `--stdio` to the command line, which
        // `coherence serve` does not take. Without it the client still talks over stdin/stdout.
        options: { cwd, env: { ...process.env, ...launch.env } },
    };
    traceInfo(`Server: ${launch.describe}: ${[executable.command, ...(executable.args ?? [])].join(' ')} (cwd ${cwd})`);

    const clientOptions: LanguageClientOptions = {
        documentSelector: [
            { scheme: 'file', language: 'python' },
            { scheme: 'untitled', language: 'python' },
        ],
        outputChannel: channel,
        traceOutputChannel: channel,
        revealOutputChannelOn: RevealOutputChannelOn.Never,
        errorHandler,
        initializationFailedHandler: (error) => {
            traceError('Server initialization failed:', error);
            return false;
        },
        // A function, so the automatic restarts after a crash send the current settings.
        initializationOptions: (): InitializationOptions => ({
            settings: explicitSettings(getProjectRoot()?.uri),
            workspaceTrusted: workspace.isTrusted,
            raiseCostCap: true,
            problemActions: true,
            sampleRequest: true,
        }),
        synchronize: { configurationSection: CONFIG_SECTION },
        middleware: {
            executeCommand: executeCommandMiddleware(),
            workspace: { configuration: configurationMiddleware() },
        },
    };
    return new CoherenceLanguageClient(SERVER_ID, SERVER_NAME, { run: executable, debug: executable }, clientOptions);
}

function openExtensionSettings(): Thenable<unknown> {
    return commands.executeCommand('workbench.action.openSettings', `@ext:${EXTENSION_ID}`);
}

export class ServerManager implements Disposable {
    private client: LanguageClient | undefined;
    private clientDisposables: Disposable[] = [];
    private queue: Promise<void> = Promise.resolve();
    private disposed = false;
    /** Whether the running server can sample from a model (litellm importable). */
    private llm = false;
    /** The server said a model (from the project or the user's config) needs litellm: from then on
     * it starts from the private environment with the llm extra. */
    private llmAsked = false;

    constructor(
        private readonly context: ExtensionContext,
        private readonly channel: LogOutputChannel,
        private readonly status: StatusBar,
    ) {}

    /** Stops the running server, if any, and starts a new one. Calls are serialized. */
    restart(reason: string): Promise<void> {
        this.queue = this.queue
            .then(() => this.doRestart(reason))
            .catch((error: unknown) => {
                traceError('Server restart failed:', error);
                this.status.setState({ kind: 'error', message: `the server failed to start: ${String(error)}` });
            });
        return this.queue;
    }

    private async doRestart(reason: string): Promise<void> {
        if (this.disposed) {
            return;
        }
        traceInfo(`Starting the server (${reason}).`);
        await this.stopClient();
        if (!workspace.isTrusted) {
            // Coherence runs the workspace's code: nothing starts until the folder is trusted.
            traceInfo('The workspace is not trusted (Restricted Mode): the server is not started.');
            this.status.setState({ kind: 'untrusted' });
            return;
        }
        this.status.setState({ kind: 'starting' });

        const settings = getSettings(getProjectRoot()?.uri);
        if (!enabledInSomeFolder()) {
            traceInfo('coherence.enable is false in every workspace folder: the server is not started.');
            this.status.setState({ kind: 'disabled' });
            return;
        }
        const interpreter = await resolveInterpreter(getProjectRoot()?.uri);
        traceInfo(
            `Python interpreter (from ${interpreter.source}): ${interpreter.command.join(' ')}; importStrategy ${settings.importStrategy}`,
        );
        const cwd = getServerCwd();
        let launch: ServerLaunch;
        if (settings.importStrategy === 'useBundled') {
            try {
                this.status.setState({ kind: 'starting' });
                launch = await bundledLaunch(
                    this.context,
                    interpreter.command,
                    cwd,
                    this.llmAsked || modelConfigured(),
                );
            } catch (error) {
                const message = error instanceof Error ? error.message : String(error);
                traceError(`The bundled server cannot start with "${interpreter.command.join(' ')}": ${message}`);
                this.status.setState({ kind: 'error', message });
                void this.promptServerProblem(
                    `Coherence: ${message}. Select another interpreter in the Python extension or set "coherence.interpreter".`,
                    [],
                );
                return;
            }
        } else {
            const check = await checkImportable(interpreter.command, cwd);
            if (!check.ok) {
                logImportFailure(interpreter, check);
                this.status.setState({
                    kind: 'error',
                    message: check.notFound
                        ? `Python interpreter not found: ${interpreter.command.join(' ')}`
                        : `coherence is not installed for ${interpreter.command.join(' ')}`,
                });
                void this.promptMissingServer(interpreter, check);
                return;
            }
            const [command, ...lead] = interpreter.command;
            launch = {
                command: command ?? '',
                args: [...lead, ...SERVER_ARGS],
                describe: `coherence from ${interpreter.command.join(' ')}'s environment`,
                llm: true, // the environment's own coherence: its installed extras decide
            };
        }
        this.llm = launch.llm;

        const errorHandler = new ServerErrorHandler();
        const client = createClient(launch, cwd, this.channel, errorHandler);
        this.client = client;
        this.clientDisposables.push(
            client.onDidChangeState((e) => {
                const running = e.newState === State.Running;
                void commands.executeCommand('setContext', CONTEXT_SERVER_RUNNING, running);
                if (e.newState === State.Running) {
                    errorHandler.hasRun = true;
                    traceVerbose('Server state: running');
                    this.status.setState({ kind: 'running' });
                } else if (e.newState === State.Starting) {
                    traceVerbose('Server state: starting');
                    this.status.setState({ kind: 'starting' });
                } else {
                    // Our own stops dispose this listener first, so this stop is the server's doing
                    // (a crash; the error handler restarts it unless it crashed too often).
                    traceVerbose('Server state: stopped');
                    this.status.setState({
                        kind: 'error',
                        message: 'the server stopped; see the output, then run "Coherence: Restart Server"',
                    });
                }
            }),
            client.onNotification(STATUS_NOTIFICATION, (params: unknown) => {
                this.status.setCounts(parseStatusParams(params));
            }),
            client.onRequest(RAISE_COST_CAP_REQUEST, (params: unknown) => raiseCostCap(params)),
            client.onRequest(SAMPLE_REQUEST, (params: unknown, token: CancellationToken) => answerSample(params, token)),
            client.onNotification(PROBLEM_NOTIFICATION, (params: unknown) => {
                if (needsLlm(params) && !this.llm && !this.llmAsked && settings.importStrategy === 'useBundled') {
                    // the fix the message names is an install: the extension does it for its own server
                    this.llmAsked = true;
                    traceInfo(
                        `${String((params as { message?: unknown }).message)} Preparing it in the extension's storage.`,
                    );
                    void this.restart('a configured model needs litellm');
                    return;
                }
                void showProblem(params, needsModel(params) ? editorModelOffer : undefined);
            }),
        );
        try {
            await client.start();
        } catch (error) {
            // The client has already shown "couldn't create connection to server" with "Go to output".
            traceError('The server failed to start:', error);
        }
        // start() can also resolve without a running server (when the process exits during
        // initialize), so look at the state rather than at how start() settled.
        if (this.client === client && client.isRunning()) {
            traceInfo('Server started.');
        } else if (this.client === client) {
            this.status.setState({ kind: 'error', message: 'the server failed to start; see the output' });
        }
    }

    /** importStrategy "fromEnvironment" and an interpreter without coherence: offer the bundled
     * server (which needs no install) or the settings.  Never a `pip install` by name. */
    private async promptMissingServer(interpreter: Interpreter, check: ImportCheck & { ok: false }): Promise<void> {
        const python = interpreter.command.join(' ');
        const message = check.notFound
            ? `Coherence: the Python interpreter "${python}" was not found. Select one in the Python extension or set "coherence.interpreter".`
            : `Coherence: "${python}" cannot import coherence, and "coherence.importStrategy" is "fromEnvironment". Use the server bundled with the extension, or pick another interpreter.`;
        await this.promptServerProblem(message, check.notFound ? [] : [USE_BUNDLED]);
    }

    private async promptServerProblem(message: string, extra: string[]): Promise<void> {
        const openSettings = 'Open settings';
        const choice = await window.showErrorMessage(message, ...extra, openSettings);
        if (choice === USE_BUNDLED) {
            // The restart follows from the configuration change (extension.ts).
            await workspace
                .getConfiguration(CONFIG_SECTION)
                .update('importStrategy', 'useBundled', ConfigurationTarget.Global);
        } else if (choice === openSettings) {
            await openExtensionSettings();
        }
    }

    private async stopClient(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        for (const d of this.clientDisposables) {
            d.dispose();
        }
        this.clientDisposables = [];
        void commands.executeCommand('setContext', CONTEXT_SERVER_RUNNING, false);
        if (!client) {
            return;
        }
        traceInfo('Stopping the server.');
        try {
            if (client.needsStop()) {
                await client.stop(STOP_TIMEOUT_MS);
            }
        } catch (error) {
            traceWarn('Error while stopping the server:', error);
        }
        try {
            await client.dispose(STOP_TIMEOUT_MS);
        } catch {
            // Already stopped.
        }
    }

    /** A model is now configured and the running server cannot reach one (no litellm): the next
     * start takes the private environment with the llm extra. */
    needsLlm(): boolean {
        return this.client !== undefined && !this.llm && modelConfigured();
    }

    /** Stops the server; used on deactivation. */
    async stop(): Promise<void> {
        this.disposed = true;
        await this.queue;
        await this.stopClient();
    }

    dispose(): void {
        void this.stop();
    }
}
