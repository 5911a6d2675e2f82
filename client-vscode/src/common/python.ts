// Finding the Python that runs the server, checking that it can import coherence, and
// installing coherence into it.
import { execFile } from 'child_process';
import * as path from 'path';
import { Disposable, Event, EventEmitter, Terminal, Uri, env, extensions, window } from 'vscode';
import { IMPORT_CHECK_TIMEOUT_MS, PYTHON_EXTENSION_ID, SERVER_MODULE } from './constants';
import { traceError, traceInfo, traceVerbose, traceWarn } from './log';
import { getSettings } from './settings';
import type { PythonExtension } from '@vscode/python-extension';

export type InterpreterSource = 'setting' | 'python-extension' | 'default';

export interface Interpreter {
    /** The executable followed by any leading arguments. */
    command: string[];
    source: InterpreterSource;
}

export function defaultPython(): string {
    return process.platform === 'win32' ? 'python' : 'python3';
}

async function getPythonApi(): Promise<PythonExtension | undefined> {
    // Optional dependency: only touch the API when the Python extension is installed.
    if (!extensions.getExtension(PYTHON_EXTENSION_ID)) {
        return undefined;
    }
    try {
        const { PythonExtension } = await import('@vscode/python-extension');
        return await PythonExtension.api();
    } catch (error) {
        traceWarn('Could not use the Python extension API:', error);
        return undefined;
    }
}

async function interpreterFromPythonExtension(resource: Uri | undefined): Promise<string | undefined> {
    const api = await getPythonApi();
    if (!api) {
        return undefined;
    }
    try {
        const active = api.environments.getActiveEnvironmentPath(resource);
        const resolved = await api.environments.resolveEnvironment(active);
        return resolved?.executable.uri?.fsPath;
    } catch (error) {
        traceWarn('Could not resolve the Python extension interpreter:', error);
        return undefined;
    }
}

/**
 * The interpreter for the server: the `coherence.interpreter` setting, else the Python
 * extension's selected interpreter, else `python3` (`python` on Windows).
 */
export async function resolveInterpreter(resource: Uri | undefined): Promise<Interpreter> {
    const fromSetting = getSettings(resource).interpreter;
    if (fromSetting.length > 0) {
        return { command: fromSetting, source: 'setting' };
    }
    const fromExtension = await interpreterFromPythonExtension(resource);
    if (fromExtension) {
        return { command: [fromExtension], source: 'python-extension' };
    }
    return { command: [defaultPython()], source: 'default' };
}

const onDidChangePythonInterpreterEmitter = new EventEmitter<void>();
/** Fires when the Python extension's selected interpreter changes. */
export const onDidChangePythonInterpreter: Event<void> = onDidChangePythonInterpreterEmitter.event;

/** Subscribes to interpreter changes in the Python extension, if it is installed. */
export async function initializePython(disposables: Disposable[]): Promise<void> {
    const api = await getPythonApi();
    if (!api) {
        traceVerbose('Python extension not installed; not following its interpreter.');
        return;
    }
    disposables.push(
        onDidChangePythonInterpreterEmitter,
        api.environments.onDidChangeActiveEnvironmentPath((e) => {
            traceInfo(`Python extension interpreter changed: ${e.path}`);
            onDidChangePythonInterpreterEmitter.fire();
        }),
    );
}

export type ImportCheck = { ok: true } | { ok: false; notFound: boolean; detail: string };

/** Runs `<python> -c "import coherence"`. */
export function checkImportable(command: string[], cwd: string): Promise<ImportCheck> {
    const [exe, ...args] = command;
    if (!exe) {
        return Promise.resolve({ ok: false, notFound: true, detail: 'empty interpreter command' });
    }
    return new Promise((resolve) => {
        execFile(
            exe,
            [...args, '-c', `import ${SERVER_MODULE}`],
            { cwd, timeout: IMPORT_CHECK_TIMEOUT_MS, windowsHide: true },
            (error, _stdout, stderr) => {
                if (!error) {
                    resolve({ ok: true });
                    return;
                }
                const code = (error as NodeJS.ErrnoException).code;
                const detail = stderr.trim() || error.message;
                resolve({ ok: false, notFound: code === 'ENOENT' || code === 'EACCES', detail });
            },
        );
    });
}

type ShellKind = 'posix' | 'powershell' | 'cmd';

function shellKind(): ShellKind {
    const shell = path.basename(env.shell || '').toLowerCase();
    if (shell.includes('pwsh') || shell.includes('powershell')) {
        return 'powershell';
    }
    if (shell === 'cmd.exe' || shell === 'cmd') {
        return 'cmd';
    }
    return 'posix';
}

function quote(arg: string, kind: ShellKind): string {
    if (/^[\w@%+=:,./\\-]+$/.test(arg)) {
        return arg;
    }
    switch (kind) {
        case 'powershell':
            return `'${arg.replace(/'/g, "''")}'`;
        case 'cmd':
            return `"${arg.replace(/"/g, '""')}"`;
        case 'posix':
            return `'${arg.replace(/'/g, `'\\''`)}'`;
    }
}

/** The shell command line for `argv` in the user's default terminal shell. */
export function commandLine(argv: string[]): string {
    const kind = shellKind();
    const line = argv.map((a) => quote(a, kind)).join(' ');
    // PowerShell only runs a quoted program name through the call operator.
    return kind === 'powershell' ? `& ${line}` : line;
}

let installTerminal: Terminal | undefined;

/** Runs `<python> -m pip install <source>` in a terminal the user can watch. */
export function installInTerminal(command: string[], source: string): void {
    installTerminal?.dispose();
    installTerminal = window.createTerminal({ name: 'Coherence: install' });
    const line = commandLine([...command, '-m', 'pip', 'install', source]);
    traceInfo(`Installing coherence: ${line}`);
    installTerminal.show();
    installTerminal.sendText(line, true);
}

export function logImportFailure(interpreter: Interpreter, check: ImportCheck): void {
    if (!check.ok) {
        traceError(
            `"${interpreter.command.join(' ')}" (from ${interpreter.source}) cannot import ${SERVER_MODULE}:\n${check.detail}`,
        );
    }
}
